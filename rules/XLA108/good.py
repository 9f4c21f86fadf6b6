"""XLA108 fixed: drop_remainder=True, so every batch has 64 examples and XLA compiles once."""

import numpy as np
import tensorflow as tf

center = tf.Variable(tf.zeros([8]))


@tf.function(jit_compile=True)
def train_step(x):
    print("tracing train_step")  # Python runs only while TensorFlow traces
    center.assign_add(0.1 * tf.reduce_mean(x - center, axis=0))
    return tf.reduce_mean(tf.square(x - center))


def main():
    features = np.random.default_rng(0).normal(size=(1000, 8)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices(features).shuffle(1000).batch(64, drop_remainder=True)
    for epoch in range(2):
        losses = [float(train_step(x)) for x in dataset]  # 15 full batches; the last 40 examples wait
        print(f"epoch {epoch}: mean loss {sum(losses) / len(losses):.4f}")


if __name__ == "__main__":
    main()
