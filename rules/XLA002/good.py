"""XLA002 unsupported-dtype: the same computations with dtypes XLA accepts."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 32, 32, 3], tf.uint8)])
def integral_image(images):
    pixels = tf.cast(images, tf.int32)  # Cumsum has an int32 kernel, and the sums outgrow uint8
    rows = tf.cumsum(pixels, axis=1)
    return tf.cumsum(rows, axis=2)


# The input pipeline turns the string labels into numbers, e.g.
# `targets = tf.cast(labels == "spam", tf.float32)` in a `tf.data` map.
@tf.function(input_signature=[tf.TensorSpec([8], tf.float32), tf.TensorSpec([8], tf.float32)])
def spam_loss(logits, targets):
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(targets, logits))
