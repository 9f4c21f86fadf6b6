"""XLA104 unknown-dims: the signature leaves dimensions unknown."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32)])
def normalize_rows(features):  # expect: XLA104
    return features / tf.norm(features, axis=1, keepdims=True)


@tf.function(input_signature=[tf.TensorSpec([16, None], tf.int32), tf.TensorSpec([1000, 32], tf.float32)])
def mean_embedding(token_ids, table):  # expect: XLA104
    return tf.reduce_mean(tf.gather(table, token_ids), axis=1)
