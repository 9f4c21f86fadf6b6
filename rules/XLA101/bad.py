"""XLA101 non-constant-shape-input: shapes, axes and sizes XLA can never know when compiling."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([12], tf.float32)])
def random_rows(x):
    rows = tf.random.uniform([], 2, 5, dtype=tf.int32)
    return tf.reshape(x, [rows, -1])  # expect: XLA101


@tf.function(input_signature=[tf.TensorSpec([4, 4], tf.float32)])
def random_axis(x):
    axis = tf.random.uniform([], 0, 2, dtype=tf.int32)
    return tf.reduce_sum(x, axis=axis)  # expect: XLA101


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def random_prefix_sum(x):
    n = tf.random.uniform([], 1, 9, dtype=tf.int32)
    return tf.reduce_sum(tf.gather(x, tf.range(n)))  # expect: XLA101


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def prefix_sums_in_loop(x):
    def body(i, total, values):
        prefix = tf.gather(values, tf.range(i))  # expect: XLA101
        return i + 1, total + tf.reduce_sum(prefix), values

    _, total, _ = tf.while_loop(lambda i, total, values: i <= 8, body, [tf.constant(1), tf.constant(0.0), x])
    return total


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def one_slot_per_step(x):
    def body(steps, level):
        return steps + 1, level * 2.0

    steps, _ = tf.while_loop(lambda steps, level: level < 100.0, body,
                             [tf.constant(0), tf.reduce_max(tf.abs(x)) + 1.0])
    return tf.zeros([steps])  # expect: XLA101


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def repeat_by_loop_count(x):
    count, _ = tf.while_loop(lambda i, s: s < 10.0, lambda i, s: (i + 1, s + 3.0), [tf.constant(0), tf.constant(0.0)])
    return tf.tile(x, [count])  # expect: XLA101
