"""XLA401 experimental-compile: the same function, with the keyword's current name."""

import tensorflow as tf


@tf.function(jit_compile=True,
             input_signature=[tf.TensorSpec([16, 32], tf.float32), tf.TensorSpec([32, 8], tf.float32)])
def dense_relu(x, w):
    return tf.nn.relu(tf.matmul(x, w))
