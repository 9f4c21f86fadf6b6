"""XLA110 fixed: the tf.function is made once, before the loop, and traced once."""

import tensorflow as tf


def update(x):
    print("tracing update")  # Python runs only while TensorFlow traces
    return x * 0.9 + 1.0


def main():
    x = tf.zeros([4, 4])
    step_fn = tf.function(update, jit_compile=True)
    for step in range(4):
        x = step_fn(x)
    print(float(tf.reduce_sum(x)))


if __name__ == "__main__":
    main()
