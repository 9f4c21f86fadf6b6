"""XLA108 fixed: drop_remainder=True, so every batch has 64 examples and XLA compiles once."""

import numpy as np
import tensorflow as tf

weights = tf.Variable(tf.zeros([8, 1]))


@tf.function(jit_compile=True)
def train_step(x):
    print("tracing train_step")  # Python runs only while TensorFlow traces
    weights.assign_sub(0.01 * tf.reduce_mean(x, axis=0)[:, None])
    return tf.reduce_mean(tf.matmul(x, weights))


def main():
    features = np.random.default_rng(0).normal(size=(1000, 8)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices(features).shuffle(1000).batch(64, drop_remainder=True)
    for epoch in range(2):
        for x in dataset:
            loss = train_step(x)
        print(f"epoch {epoch}: loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
