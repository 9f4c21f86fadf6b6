"""`tf.function(callable_object, jit_compile=True)`: the object's __call__ runs NumPy, which XLA cannot compile."""

import numpy as np
import tensorflow as tf


class Doubled:
    def __call__(self, x):
        return tf.numpy_function(lambda v: v * 2, [x], tf.float32)


def main():
    doubled = tf.function(Doubled(), jit_compile=True)
    print(doubled(np.ones((4, 3), "float32")).shape)


if __name__ == "__main__":
    main()
