"""XLA402 xla-devices-flag: a flag that creates XLA devices, set in the belief that it turns XLA on."""

import os

os.environ["TF_XLA_FLAGS"] = "--tf_xla_enable_xla_devices"  # expect: XLA402

import tensorflow as tf  # noqa: E402 - TensorFlow reads TF_XLA_FLAGS once, before its first use


@tf.function(input_signature=[tf.TensorSpec([64, 128], tf.float32), tf.TensorSpec([128, 64], tf.float32)])
def score(x, w):
    return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * 2.0 + 1.0, axis=1)
