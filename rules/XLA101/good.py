"""XLA101 non-constant-shape-input: the same intents with shapes XLA knows when compiling."""

import tensorflow as tf

MAX_STEPS = 8  # an upper bound known in Python: pad to it, mask what is unused


@tf.function(input_signature=[tf.TensorSpec([12], tf.float32)])
def static_rows(x):
    rows = tf.shape(x)[0] // 4  # static under XLA: 3
    return tf.reshape(x, [rows, -1])


@tf.function(input_signature=[tf.TensorSpec([4, 4], tf.float32)])
def random_axis(x):
    pick_rows = tf.random.uniform([]) < 0.5
    return tf.where(pick_rows, tf.reduce_sum(x, axis=0), tf.reduce_sum(x, axis=1))


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def random_prefix_sum(x):
    n = tf.random.uniform([], 1, 9, dtype=tf.int32)
    keep = tf.range(tf.shape(x)[0]) < n
    return tf.reduce_sum(tf.where(keep, x, 0.0))


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def prefix_sums_in_loop(x):
    def body(i, total, values):
        keep = tf.range(tf.shape(values)[0]) < i
        return i + 1, total + tf.reduce_sum(tf.where(keep, values, 0.0)), values

    _, total, _ = tf.while_loop(lambda i, total, values: i <= 8, body, [tf.constant(1), tf.constant(0.0), x])
    return total


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def one_slot_per_step(x):
    def body(steps, level):
        return steps + 1, level * 2.0

    steps, _ = tf.while_loop(lambda steps, level: level < 100.0, body,
                             [tf.constant(0), tf.reduce_max(tf.abs(x)) + 1.0],
                             maximum_iterations=MAX_STEPS)
    return tf.zeros([MAX_STEPS]), tf.range(MAX_STEPS) < steps  # padded buffer + which slots are used


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def repeat_by_loop_count(x):
    count, _ = tf.while_loop(lambda i, s: s < 10.0, lambda i, s: (i + 1, s + 3.0), [tf.constant(0), tf.constant(0.0)],
                             maximum_iterations=MAX_STEPS)
    tiled = tf.tile(x, [MAX_STEPS])
    return tf.where(tf.range(MAX_STEPS * 8) < count * 8, tiled, 0.0)
