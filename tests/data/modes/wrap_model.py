"""`fast = tf.function(model, jit_compile=True)` over a model whose MixUp layer XLA cannot compile (Keras would)."""

import keras
import numpy as np
import tensorflow as tf

images = keras.Input((8, 8, 3))
mixed = keras.layers.MixUp()(images)
model = keras.Model(images, keras.layers.Dense(1)(keras.layers.GlobalAveragePooling2D()(mixed)))
fast = tf.function(model, jit_compile=True)


def main():
    batch = np.ones((4, 8, 8, 3), "float32")
    for _ in range(3):
        print(fast(batch).shape)


if __name__ == "__main__":
    main()
