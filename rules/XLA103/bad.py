"""XLA103 dynamic-output-shape: ops whose output size depends on the data."""

import tensorflow as tf


def _kept(values, keep):
    return tf.boolean_mask(values, keep)  # expect: XLA103


@tf.function(input_signature=[tf.TensorSpec([32], tf.float32), tf.TensorSpec([32], tf.float32)])
def masked_mean_loss(losses, weights):
    return tf.reduce_mean(tf.boolean_mask(losses, weights > 0))  # expect: XLA103


@tf.function(input_signature=[tf.TensorSpec([32], tf.float32), tf.TensorSpec([32], tf.int32)])
def positive_scores(scores, labels):
    indices = tf.where(labels > 0)  # expect: XLA103
    return tf.gather_nd(scores, indices)


@tf.function(input_signature=[tf.TensorSpec([32], tf.int32)])
def distinct_ids(ids):
    values, _ = tf.unique(ids)  # expect: XLA103
    return tf.size(values)


@tf.function(input_signature=[tf.TensorSpec([16, 4], tf.float32), tf.TensorSpec([16], tf.float32)])
def detect(boxes, scores):
    selected = tf.image.non_max_suppression(boxes, scores, max_output_size=8)  # expect: XLA103
    return tf.gather(boxes, selected)


@tf.function(input_signature=[tf.TensorSpec([32], tf.float32)])
def signed_totals(x):
    negative, positive = tf.dynamic_partition(x, tf.cast(x > 0, tf.int32), 2)  # expect: XLA103
    return tf.reduce_sum(positive), tf.reduce_sum(negative)


@tf.function(input_signature=[tf.TensorSpec([32, 8], tf.float32), tf.TensorSpec([32], tf.bool)])
def valid_rows_total(features, valid):
    # The Where op is created inside tf.boolean_mask; it is reported at _kept's line.
    return tf.reduce_sum(_kept(features, valid), axis=0)
