"""XLA304 fixed: the variables are made in __init__, from the shape the sums will have."""

import tensorflow as tf


class RunningSum(tf.Module):
    def __init__(self, shape):
        self.total = tf.Variable(tf.zeros(shape))
        self.calls = tf.Variable(0)

    @tf.function(jit_compile=True)
    def __call__(self, x):
        self.total.assign_add(x)
        self.calls.assign_add(1)
        return self.total.read_value()


def main():
    running = RunningSum([3])
    for step in range(3):
        total = running(tf.fill([3], float(step)))
        print(step, total.numpy())


if __name__ == "__main__":
    main()
