"""XLA107 python-number-argument: a loop hands a compiled function a new Python number each pass."""

import tensorflow as tf


@tf.function(jit_compile=True)
def decayed_update(weights, grads, step):
    rate = 0.1 / (1.0 + tf.cast(step, tf.float32))
    return weights - rate * grads


@tf.function(jit_compile=True)
def scaled(x, factor):
    return x * factor


@tf.function
def shifted(x, offset):
    return x + offset


def run():
    weights, grads = tf.ones([8]), tf.fill([8], 0.5)
    for step in range(3):
        weights = decayed_update(weights, grads, step)  # expect: XLA107
    for index, factor in enumerate([0.5, 0.25, 0.125]):
        weights = scaled(weights, factor=index)  # expect: XLA107
    return [shifted(weights, offset) for offset in range(3)]  # expect: XLA107
