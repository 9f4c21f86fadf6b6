"""`tf.function(layer, jit_compile=True)` made and called in main(): a MixUp layer, which XLA cannot compile."""

import keras
import numpy as np
import tensorflow as tf

mix = keras.layers.MixUp()


def main():
    mixing = tf.function(mix, jit_compile=True)
    print(mixing(np.ones((4, 8, 8, 3), "float32")).shape)


if __name__ == "__main__":
    main()
