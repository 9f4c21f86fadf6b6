"""A top-level loop passes the step number as a Python number: every value is a new trace and XLA build."""

import tensorflow as tf


@tf.function(jit_compile=True)
def scaled(x, factor):
    print("tracing scaled")  # Python runs only while TensorFlow traces
    return x * factor


for step in range(5):
    scaled(tf.ones([4]), step)
