"""Trains only in its __main__ block: the compiled step turns numbers into strings."""

import tensorflow as tf


@tf.function(jit_compile=True)
def train_step(x):
    return tf.strings.as_string(tf.reduce_sum(x))


def main():
    for _ in range(3):
        train_step(tf.ones([4]))


if __name__ == "__main__":
    main()
