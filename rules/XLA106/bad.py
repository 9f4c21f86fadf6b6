"""XLA106 dynamic-shape-blocker: a data-dependent size reaches an op that fails on it."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([16], tf.float32)])
def low_half(x):
    order = tf.argsort(x)
    kept = tf.boolean_mask(x, order < 8)
    return tf.reshape(kept, [2, 4])  # expect: XLA106
