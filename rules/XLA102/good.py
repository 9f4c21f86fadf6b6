"""XLA102 value-specialized-input: fixed shapes, with the argument's value used as data (a mask)."""

import tensorflow as tf

MAX_LEN = 16  # pad to one fixed size known in Python


@tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
def zeros_of_length(n):
    return tf.zeros([MAX_LEN]), tf.range(MAX_LEN) < n  # padded values + which are valid


@tf.function(input_signature=[tf.TensorSpec([12], tf.float32)])
def split_rows(x):
    return tf.reshape(x, [3, -1])  # a Python constant: one compilation


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([8], tf.float32)])
def first_n(n, x):
    return tf.where(tf.range(tf.shape(x)[0]) < n, x, 0.0)


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([4], tf.float32)])
def repeat(times, x):
    tiled = tf.tile(x, [MAX_LEN // 4])
    return tf.where(tf.range(MAX_LEN) < times * tf.shape(x)[0], tiled, 0.0)


@tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([8], tf.float32)])
def count_in_loop(n, x):
    def body(i, total, length):
        ones = tf.cast(tf.range(MAX_LEN) < length, tf.float32)
        return i + 1, total + tf.reduce_sum(ones), length

    _, total, _ = tf.while_loop(lambda i, total, length: i < 3, body, [tf.constant(0), tf.reduce_sum(x), n])
    return total
