"""XLA103 dynamic-output-shape: the same computations with fixed-size results."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([32], tf.float32), tf.TensorSpec([32], tf.float32)])
def masked_mean_loss(losses, weights):
    mask = tf.cast(weights > 0, losses.dtype)
    return tf.math.divide_no_nan(tf.reduce_sum(losses * mask), tf.reduce_sum(mask))


@tf.function(input_signature=[tf.TensorSpec([32], tf.float32), tf.TensorSpec([32], tf.int32)])
def positive_scores(scores, labels):
    keep = labels > 0
    # Selected positions first (stable, so in their original order), then padding.
    order = tf.argsort(tf.cast(keep, tf.int32), direction="DESCENDING", stable=True)
    count = tf.reduce_sum(tf.cast(keep, tf.int32))
    return tf.where(tf.range(32) < count, tf.gather(scores, order), 0.0), count


@tf.function(input_signature=[tf.TensorSpec([32], tf.int32)])
def distinct_ids(ids):
    ordered = tf.sort(ids)
    first = tf.concat([[True], ordered[1:] != ordered[:-1]], axis=0)
    return tf.reduce_sum(tf.cast(first, tf.int32))


def _pairwise_iou(boxes):
    y1 = tf.minimum(boxes[:, 0], boxes[:, 2])
    x1 = tf.minimum(boxes[:, 1], boxes[:, 3])
    y2 = tf.maximum(boxes[:, 0], boxes[:, 2])
    x2 = tf.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    height = tf.nn.relu(tf.minimum(y2[:, None], y2[None, :]) - tf.maximum(y1[:, None], y1[None, :]))
    width = tf.nn.relu(tf.minimum(x2[:, None], x2[None, :]) - tf.maximum(x1[:, None], x1[None, :]))
    overlap = height * width
    return tf.math.divide_no_nan(overlap, area[:, None] + area[None, :] - overlap)


@tf.function(input_signature=[tf.TensorSpec([16, 4], tf.float32), tf.TensorSpec([16], tf.float32)])
def detect(boxes, scores):
    """Greedy NMS over all 16 boxes, then the first 8 survivors, padded with zero boxes."""
    order = tf.argsort(scores, direction="DESCENDING", stable=True)
    iou = _pairwise_iou(tf.gather(boxes, order))

    def suppress(i, keep, iou):  # box i, if still kept, drops every later box that overlaps it
        later = tf.range(16) > i
        return i + 1, keep & ~(later & (tf.gather(iou, i) > 0.5) & tf.gather(keep, i)), iou

    start = (0, tf.ones([16], tf.bool), iou)
    _, keep, _ = tf.while_loop(lambda i, keep, iou: i < 16, suppress, start)
    keep = keep & (tf.cumsum(tf.cast(keep, tf.int32)) <= 8)
    first = tf.argsort(tf.cast(keep, tf.int32), direction="DESCENDING", stable=True)[:8]
    count = tf.reduce_sum(tf.cast(keep, tf.int32))
    selected = tf.gather(boxes, tf.gather(order, first))
    return tf.where((tf.range(8) < count)[:, None], selected, 0.0), count


@tf.function(input_signature=[tf.TensorSpec([32], tf.float32)])
def signed_totals(x):
    positive = x > 0
    return tf.reduce_sum(tf.where(positive, x, 0.0)), tf.reduce_sum(tf.where(positive, 0.0, x))


@tf.function(input_signature=[tf.TensorSpec([32, 8], tf.float32), tf.TensorSpec([32], tf.bool)])
def valid_rows_total(features, valid):
    return tf.reduce_sum(features * tf.cast(valid, features.dtype)[:, None], axis=0)
