"""Prepares its data forever before the first step (a download or a preprocessing pass that never ends)."""

import time

import tensorflow as tf


@tf.function(jit_compile=True)
def train_step(x):
    return tf.reduce_sum(x)


def prepare():
    while True:
        time.sleep(0.05)


prepare()
train_step(tf.ones([2]))
