"""A tf.data loop that passes a learning rate computed from the step number: a new Python float per batch,
so every batch is a new trace and a new XLA compilation. A run sees it only past the loop's first batch."""

import tensorflow as tf

weights = tf.Variable(tf.zeros([3]))


@tf.function(jit_compile=True)
def step(x, lr):  # expect: XLA109
    print("tracing step")  # Python runs only while TensorFlow traces
    weights.assign_sub(lr * tf.reduce_mean(x, axis=0))
    return tf.reduce_sum(weights)


def main():
    batches = tf.data.Dataset.from_tensor_slices(tf.ones([40, 3])).batch(8)
    for number, x in enumerate(batches):
        step(x, 0.1 / (number + 1))


if __name__ == "__main__":
    main()
