"""XLA102 value-specialized-input: shapes taken from argument values (one compilation per value)."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
def zeros_of_length(n):
    return tf.zeros([n])  # expect: XLA102


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([12], tf.float32)])
def split_rows(rows, x):
    return tf.reshape(x, [rows, -1])  # expect: XLA102


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([8], tf.float32)])
def first_n(n, x):
    return x[:n]  # expect: XLA102


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([4], tf.float32)])
def repeat(times, x):
    return tf.tile(x, [times])  # expect: XLA102


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([8], tf.float32)])
def count_in_loop(n, x):
    def body(i, total, length):
        return i + 1, total + tf.reduce_sum(tf.ones([length])), length  # expect: XLA102

    _, total, _ = tf.while_loop(lambda i, total, length: i < 3, body, [tf.constant(0), tf.reduce_sum(x), n])
    return total
