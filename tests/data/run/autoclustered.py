"""Auto-clustering turned on by the script: a custom loop of plain tf.functions, with a host call in the step.

No function has jit_compile: TensorFlow cuts each graph into clusters XLA compiles and runs the
NumPy call between them itself.
"""

import argparse

import numpy as np
import tensorflow as tf


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    tf.config.optimizer.set_jit(True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = np.tanh(x[:, :2] * 3.0).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
    w1 = tf.Variable(rng.normal(size=(8, 16)).astype("float32") * 0.3)
    w2 = tf.Variable(rng.normal(size=(16, 2)).astype("float32") * 0.3)
    weights = [w1, w2]

    def clip_scale(gradient):
        return np.float32(min(1.0, 1.0 / (np.abs(gradient).max() + 1e-6)))

    @tf.function
    def train_step(features, targets):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(tf.matmul(features, w1))
            error = tf.matmul(hidden, w2) - targets
            loss = tf.reduce_mean(tf.square(error))
        gradients = tape.gradient(loss, weights)
        scale = tf.numpy_function(clip_scale, [gradients[0]], tf.float32)
        for weight, gradient in zip(weights, gradients):
            weight.assign_sub(0.1 * tf.reshape(scale, []) * gradient)
        return loss

    for epoch in range(args.epochs):
        for features, targets in dataset:
            loss = train_step(features, targets)
        print(f"epoch {epoch}: loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
