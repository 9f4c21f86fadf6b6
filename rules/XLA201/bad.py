"""XLA201 dynamic-size-tensor-array: XLA does not grow a TensorArray; it returns a cut-down result."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
def squares(n):
    found = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    for i in tf.range(n):
        found = found.write(i, i * i)  # expect: XLA201
    return found.stack()


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def doubling_until(limit):
    history = tf.TensorArray(tf.float32, size=2, dynamic_size=True)

    def body(i, value, history):
        return i + 1, value * 2.0, history.write(i, value)  # expect: XLA201

    _, _, history = tf.while_loop(lambda i, value, history: value < 100.0 + tf.abs(limit), body,
                                  [0, tf.constant(1.0), history], maximum_iterations=16)
    return history.stack()
