"""A custom training loop in the shape of TensorFlow's tutorials, with no annotation for xlalint.

`train_step` has no input_signature and lives inside main(); its shapes exist only when the
script runs. `xlalint run examples/train_loop.py --epochs 3` runs the script up to the first
call of `train_step`, traces it on that first batch, and reports what XLA cannot compile:
the `tf.print` in the step. Nothing is compiled or trained, and nothing is written.
"""

import argparse

import keras
import numpy as np
import tensorflow as tf


class MnistLike(keras.Model):
    def __init__(self, filters: int):
        super().__init__()
        self.conv = keras.layers.Conv2D(filters, 3, activation="relu")
        self.pool = keras.layers.GlobalAveragePooling2D()
        self.head = keras.layers.Dense(10)

    def call(self, images, training=False):
        return self.head(self.pool(self.conv(images)))


def make_dataset(size: int, batch_size: int) -> tf.data.Dataset:
    rng = np.random.default_rng(0)
    images = rng.random((size, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, size)
    return tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(size).batch(batch_size)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--filters", type=int, default=16)
    args = parser.parse_args()

    model = MnistLike(args.filters)
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_ds = make_dataset(2048, args.batch_size)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        tf.print("loss:", loss)
        return loss

    for epoch in range(args.epochs):
        for x, y in train_ds:
            loss = train_step(x, y)
        checkpoint.save("checkpoints/ckpt")
        print(f"epoch {epoch}: loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
