"""tape.gradient of a while loop without maximum_iterations: the backward pass needs a list of unknown size."""

import tensorflow as tf

weight = tf.Variable(2.0)


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.int32)])
def step(x, steps):
    with tf.GradientTape() as tape:
        y, i = x, tf.constant(0)
        while i < steps:
            y = tf.sin(y * weight)
            i += 1
    return tape.gradient(y, weight)


if __name__ == "__main__":
    print(float(step(tf.constant(1.0), tf.constant(3))))
