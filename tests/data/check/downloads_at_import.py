"""Downloads its data at its top level, as many tutorials do."""

import keras
import tensorflow as tf


@tf.function(jit_compile=True)
def train_step(x):
    return tf.reduce_sum(x * x)


path = keras.utils.get_file("data.npz", "http://data.example.invalid/data.npz")
