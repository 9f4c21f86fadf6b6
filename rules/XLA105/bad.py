"""XLA105 loop-shape-change: a while loop grows a loop variable."""

import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def collect_steps(x):
    def body(i, acc):
        return i + 1, tf.concat([acc, x * tf.cast(i, tf.float32)], axis=0)

    _, acc = tf.while_loop(lambda i, acc: i < 3, body, [0, x],  # expect: XLA105
                           shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    return tf.reduce_sum(acc)
