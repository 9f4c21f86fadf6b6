"""Zeros break this program (an assert on a returned value), so it is imported again with real values: they must
be the program's own. A tf.function returns tensors where a branch AutoGraph converts returns a Python number, and
its Python side effects happen when it traces, not at each call (the shape of TensorFlow's guides on graphs)."""

import tensorflow as tf


@tf.function
def relu(x):
    if tf.greater(x, 0):
        return x
    else:
        return 0


assert int(relu(tf.constant(3))) == 3  # zeros break it here
negative = relu(tf.constant(-1)).numpy()  # a tensor from the traced graph: 0

traced_with = []


@tf.function
def remember(x):
    traced_with.append(x)  # runs once, while tracing
    return x + 1


remember(1)
remember(1)
remember(1)
assert len(traced_with) == 1, traced_with
