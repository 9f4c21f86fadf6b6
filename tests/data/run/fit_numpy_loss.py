"""Keras `fit` with a custom loss that calls NumPy through tf.numpy_function, compiled with XLA."""

import sys

import keras
import numpy as np
import tensorflow as tf


def clipped_error(y_true, y_pred):
    error = tf.numpy_function(lambda a, b: np.clip(a - b, -1.0, 1.0).astype("float32"),
                              [y_true, y_pred], tf.float32)
    return tf.reduce_mean(tf.square(error), axis=-1)


def main(epochs):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = x[:, :1] * 2.0
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=clipped_error, jit_compile=True)
    model.fit(x, y, batch_size=32, epochs=epochs, verbose=0)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
