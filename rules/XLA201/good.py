"""XLA201 tensor-array-grows: arrays sized up front, so XLA and TensorFlow agree."""

import tensorflow as tf

MAX_STEPS = 16


@tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
def squares(n):
    found = tf.TensorArray(tf.int32, size=MAX_STEPS)
    for i in tf.range(MAX_STEPS):
        found = found.write(i, tf.where(i < n, i * i, 0))
    return found.stack()


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def fibonacci(first_two):
    sequence = tf.TensorArray(tf.float32, size=7).unstack(tf.pad(first_two, [[0, 5]]))
    for i in range(2, 7):
        sequence = sequence.write(i, sequence.read(i - 1) + sequence.read(i - 2))
    return sequence.stack()
