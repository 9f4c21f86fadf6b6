"""XLA203 check-dropped: XLA compiles the checks as no-ops; invalid input passes silently."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def entropy(probs):
    tf.debugging.assert_non_negative(probs, message="probabilities must be >= 0")  # expect: XLA203
    tf.debugging.Assert(tf.abs(tf.reduce_sum(probs) - 1.0) < 1e-3, [probs])  # expect: XLA203
    return -tf.reduce_sum(probs * tf.math.log(probs))
