"""XLA203 check-dropped: the check is returned, and the caller acts on it outside the compiled function."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def entropy(probs):
    valid = tf.reduce_all(probs >= 0.0) & (tf.abs(tf.reduce_sum(probs) - 1.0) < 1e-3)
    return -tf.reduce_sum(probs * tf.math.log(probs)), valid
