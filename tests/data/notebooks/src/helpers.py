"""Helpers that the notebook runs with `%run helpers.py`."""
import numpy as np
import tensorflow as tf


@tf.function(jit_compile=True)
def sort_scores(scores):
    return tf.numpy_function(np.sort, [scores], tf.float32)
