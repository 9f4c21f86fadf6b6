"""Straight-line code as guides write it: a training loop, then a new compiled function called after it."""

import tensorflow as tf


@tf.function(jit_compile=True)
def train_step(x):
    return tf.reduce_sum(x * x)


for step in range(10):
    train_step(tf.ones([4]))


@tf.function(jit_compile=True)
def describe(x):
    return tf.strings.as_string(tf.reduce_sum(x))


print(describe(tf.ones([4])))
