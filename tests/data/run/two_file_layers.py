"""Custom layers of the two-file project."""

import keras
import tensorflow as tf


class ValueHistogram(keras.layers.Layer):
    """Appends a histogram of each row's values as features."""

    def __init__(self, bins, **kwargs):
        super().__init__(**kwargs)
        self.bins = bins

    def call(self, x):
        counts = tf.map_fn(lambda row: tf.histogram_fixed_width(row, [-3.0, 3.0], nbins=self.bins), x,
                           fn_output_signature=tf.int32)
        return tf.cast(counts, x.dtype) / tf.cast(tf.shape(x)[1], x.dtype)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.bins)
