"""XLA110 function-made-per-iteration: tf.function(...) inside the loop makes a new function each step."""

import tensorflow as tf


def update(x):  # expect: XLA110
    print("tracing update")  # Python runs only while TensorFlow traces
    return x * 0.9 + 1.0


def main():
    x = tf.zeros([4, 4])
    for step in range(4):
        step_fn = tf.function(update, jit_compile=True)
        x = step_fn(x)
    print(float(tf.reduce_sum(x)))


if __name__ == "__main__":
    main()
