"""XLA202 tensor-array-may-grow: a fixed size that bounds the loop, and no dynamic_size."""

import tensorflow as tf

MAX_STEPS = 16
LENGTH = 32


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def doubling_until(limit):
    history = tf.TensorArray(tf.float32, size=MAX_STEPS, element_shape=[])

    def body(i, value, history):
        return i + 1, value * 2.0, history.write(i, value)

    _, _, history = tf.while_loop(lambda i, value, history: value < 100.0 + tf.abs(limit), body,
                                  [0, tf.constant(1.0), history], maximum_iterations=MAX_STEPS)
    return history.stack()


@tf.function(input_signature=[tf.TensorSpec([LENGTH], tf.float32)])
def running_max(values):
    peaks = tf.TensorArray(tf.float32, size=LENGTH)
    for i in tf.range(LENGTH):
        peaks = peaks.write(i, tf.reduce_max(values[: i + 1]))
    return peaks.stack()
