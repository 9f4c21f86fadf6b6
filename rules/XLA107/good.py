"""XLA107 python-number-argument: tensors (or an input_signature) for values that change."""

import tensorflow as tf


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([8], tf.float32), tf.TensorSpec([8], tf.float32),
                                                tf.TensorSpec([], tf.int32)])
def decayed_update(weights, grads, step):
    rate = 0.1 / (1.0 + tf.cast(step, tf.float32))
    return weights - rate * grads


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([8], tf.float32), tf.TensorSpec([], tf.float32)])
def scaled(x, factor):
    return x * factor


def run():
    weights, grads = tf.ones([8]), tf.fill([8], 0.5)
    for step in range(3):
        weights = decayed_update(weights, grads, step)  # converted to a tensor by the signature
    for index in range(3):
        weights = scaled(weights, factor=tf.constant(0.5 ** (index + 1)))
    return weights
