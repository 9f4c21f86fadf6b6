"""XLA002 unsupported-dtype: an XLA kernel exists, but not for this dtype."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 32, 32, 3], tf.uint8)])
def integral_image(images):
    rows = tf.cumsum(images, axis=1)  # expect: XLA002
    return tf.cumsum(rows, axis=2)  # expect: XLA002


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32), tf.TensorSpec([8], tf.string)])
def spam_loss(logits, labels):  # expect: XLA002
    targets = tf.cast(tf.equal(labels, "spam"), tf.float32)
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(targets, logits))


@tf.function(input_signature=[tf.TensorSpec([8, 3], tf.float32)])
def predicted_names(logits):
    names = tf.constant(["cat", "dog", "bird"])
    return tf.gather(names, tf.argmax(logits, axis=1))  # expect: XLA002
