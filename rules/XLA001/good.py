"""XLA001 unsupported-op: the same computations with ops XLA compiles."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 8], tf.float32)])
def scale_on_device(x):
    y = x * 2.0
    return tf.reduce_sum(y) + tf.reduce_sum(x)


@tf.function(input_signature=[tf.TensorSpec([16], tf.float32)])
def histogram(values):
    bins = tf.clip_by_value(tf.cast(tf.floor(values * 4.0), tf.int32), 0, 3)
    return tf.reduce_sum(tf.one_hot(bins, 4, dtype=tf.int32), axis=0)
