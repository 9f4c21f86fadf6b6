"""XLA403 enable-jit-compile: nothing in this function stops XLA, yet it runs without it."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([32, 64], tf.float32), tf.TensorSpec([64], tf.float32)])
def layer_norm(x, gain):  # expect: XLA403
    mean, variance = tf.nn.moments(x, axes=[1], keepdims=True)
    return gain * (x - mean) * tf.math.rsqrt(variance + 1e-5)
