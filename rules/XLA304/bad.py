"""XLA304 variable-in-compiled-function: a running sum whose variable starts from the first input."""

import tensorflow as tf


class RunningSum(tf.Module):
    def __init__(self):
        self.total = None

    @tf.function(jit_compile=True)
    def __call__(self, x):
        if self.total is None:
            self.calls = tf.Variable(0)  # lifted out: its initial value is a constant
            self.total = tf.Variable(x)  # expect: XLA304
        else:
            self.total.assign_add(x)
        self.calls.assign_add(1)
        return self.total.read_value()


def main():
    running = RunningSum()
    for step in range(3):
        print(running(tf.fill([3], float(step))).numpy())


if __name__ == "__main__":
    main()
