"""XLA401 experimental-compile: the old name of the keyword that turns XLA on."""

import tensorflow as tf


@tf.function(experimental_compile=True,  # expect: XLA401
             input_signature=[tf.TensorSpec([16, 32], tf.float32), tf.TensorSpec([32, 8], tf.float32)])
def dense_relu(x, w):
    return tf.nn.relu(tf.matmul(x, w))
