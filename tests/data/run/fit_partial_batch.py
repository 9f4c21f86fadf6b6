"""`fit` on a tf.data pipeline, as the Keras guides write it: 1,000 examples in batches of 64."""

import keras
import numpy as np
import tensorflow as tf


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 8)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("float32")
    train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(64).prefetch(tf.data.AUTOTUNE)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="binary_crossentropy", jit_compile=True)
    model.fit(train, epochs=2, verbose=0)


if __name__ == "__main__":
    main()
