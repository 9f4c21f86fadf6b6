"""Keras at the top level: compile(jit_compile=True) and fit, with a loss that calls NumPy."""

import keras
import numpy as np
import tensorflow as tf


def weighted_error(y_true, y_pred):
    weight = tf.numpy_function(lambda y: np.float32(1.0 / (1.0 + np.abs(y).mean())), [y_true], tf.float32)
    return tf.reshape(weight, []) * tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


x = np.random.default_rng(0).normal(size=(128, 8)).astype("float32")
y = x[:, :1] * 2.0
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=weighted_error, jit_compile=True)
model.fit(x, y, batch_size=32, epochs=3, verbose=0)
model.save("model.keras")
