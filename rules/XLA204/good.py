"""XLA204 list-length-after-pop: the count and the remaining rows come from the tensor, not the list."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float32)])
def pop_two(rows):
    pending = tf.raw_ops.TensorListFromTensor(tensor=rows, element_shape=[3])
    pending, last = tf.raw_ops.TensorListPopBack(input_handle=pending, element_shape=[3], element_dtype=tf.float32)
    pending, before = tf.raw_ops.TensorListPopBack(input_handle=pending, element_shape=[3], element_dtype=tf.float32)
    return last + before, tf.shape(rows)[0] - 2, rows[:-2]
