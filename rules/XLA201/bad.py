"""XLA201 tensor-array-grows: XLA does not grow a TensorArray; it returns a cut-down result."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
def squares(n):
    found = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    for i in tf.range(n):
        found = found.write(i, i * i)  # expect: XLA201
    return found.stack()


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def fibonacci(first_two):
    # The tf.TensorArray docstring's example: two elements from unstack, five more written.
    sequence = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(first_two)
    for i in range(2, 7):
        sequence = sequence.write(i, sequence.read(i - 1) + sequence.read(i - 2))  # expect: XLA201
    return sequence.stack()
