"""XLA001 unsupported-op: ops with no XLA kernel."""

import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 8], tf.float32)])
def scale_on_host(x):
    y = tf.numpy_function(lambda a: (a * 2).astype(np.float32), [x], tf.float32)  # expect: XLA001
    return tf.reduce_sum(y) + tf.reduce_sum(x)


@tf.function(input_signature=[tf.TensorSpec([16], tf.float32)])
def histogram(values):
    return tf.histogram_fixed_width(values, [0.0, 1.0], nbins=4)  # expect: XLA001
