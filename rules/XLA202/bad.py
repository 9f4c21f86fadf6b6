"""XLA202 tensor-array-may-grow: whether the array grows is decided by the data."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def doubling_until(limit):
    history = tf.TensorArray(tf.float32, size=2, dynamic_size=True)

    def body(i, value, history):
        return i + 1, value * 2.0, history.write(i, value)  # expect: XLA202

    _, _, history = tf.while_loop(lambda i, value, history: value < 100.0 + tf.abs(limit), body,
                                  [0, tf.constant(1.0), history], maximum_iterations=16)
    return history.stack()


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def running_max(values):
    peaks = tf.TensorArray(tf.float32, size=1, dynamic_size=True)
    for i in tf.range(tf.size(values)):
        peaks = peaks.write(i, tf.reduce_max(values[: i + 1]))  # expect: XLA202
    return peaks.stack()
