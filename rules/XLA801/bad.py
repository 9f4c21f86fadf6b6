"""XLA801 unused-suppression: a comment left behind after the code it excused was rewritten."""

import tensorflow as tf


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([8, 4], tf.float32)])
def row_norms(x):
    # This line used to call tf.numpy_function (no XLA kernel); the comment outlived the call.
    return tf.sqrt(tf.reduce_sum(x * x, axis=1))  # xlalint: ignore[XLA001]  # expect: XLA801
