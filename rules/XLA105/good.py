"""XLA105 loop-shape-change: the buffer has its final size before the loop and is written into."""

import tensorflow as tf

STEPS = 3


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def collect_steps(x):
    def body(i, acc):
        return i + 1, acc.write(i, x * tf.cast(i, tf.float32))

    buffer = tf.TensorArray(tf.float32, size=STEPS, element_shape=[2])
    _, acc = tf.while_loop(lambda i, acc: i < STEPS, body, [0, buffer])
    return tf.reduce_sum(x) + tf.reduce_sum(acc.stack())
