"""XLA201 dynamic-size-tensor-array: arrays sized up front, so XLA and TensorFlow agree."""

import tensorflow as tf

MAX_STEPS = 16


@tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
def squares(n):
    found = tf.TensorArray(tf.int32, size=MAX_STEPS)
    for i in tf.range(MAX_STEPS):
        found = found.write(i, tf.where(i < n, i * i, 0))
    return found.stack()


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def doubling_until(limit):
    history = tf.TensorArray(tf.float32, size=MAX_STEPS, element_shape=[])

    def body(i, value, history):
        return i + 1, value * 2.0, history.write(i, value)

    _, _, history = tf.while_loop(lambda i, value, history: value < 100.0 + tf.abs(limit), body,
                                  [0, tf.constant(1.0), history], maximum_iterations=MAX_STEPS)
    return history.stack()
