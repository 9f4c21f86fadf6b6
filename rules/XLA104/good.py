"""XLA104 unknown-dims: fully static signatures (pad or bucket inputs to these sizes)."""

import tensorflow as tf

BATCH = 32
MAX_TOKENS = 64


@tf.function(input_signature=[tf.TensorSpec([BATCH, 8], tf.float32)])
def normalize_rows(features):
    return features / tf.norm(features, axis=1, keepdims=True)


@tf.function(input_signature=[
    tf.TensorSpec([16, MAX_TOKENS], tf.int32),
    tf.TensorSpec([16, MAX_TOKENS], tf.float32),  # 1.0 for real tokens, 0.0 for padding
    tf.TensorSpec([1000, 32], tf.float32),
])
def mean_embedding(token_ids, mask, table):
    vectors = tf.gather(table, token_ids) * mask[:, :, tf.newaxis]
    return tf.reduce_sum(vectors, axis=1) / tf.maximum(tf.reduce_sum(mask, axis=1, keepdims=True), 1.0)
