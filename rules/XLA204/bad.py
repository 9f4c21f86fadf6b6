"""XLA204 list-length-after-pop: under XLA the popped elements still count."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float32)])
def pop_two(rows):
    pending = tf.raw_ops.TensorListFromTensor(tensor=rows, element_shape=[3])
    pending, last = tf.raw_ops.TensorListPopBack(input_handle=pending, element_shape=[3], element_dtype=tf.float32)
    pending, before = tf.raw_ops.TensorListPopBack(input_handle=pending, element_shape=[3], element_dtype=tf.float32)
    remaining = tf.raw_ops.TensorListLength(input_handle=pending)  # expect: XLA204
    rest = tf.raw_ops.TensorListStack(input_handle=pending, element_shape=[3], element_dtype=tf.float32)  # expect: XLA204
    return last + before, remaining, rest
