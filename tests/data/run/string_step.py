"""A custom training loop whose labels arrive as text and are parsed inside the compiled step."""

import argparse

import keras
import numpy as np
import tensorflow as tf


class Classifier(keras.Model):
    def __init__(self, hidden):
        super().__init__()
        self.flatten = keras.layers.Flatten()
        self.hidden = keras.layers.Dense(hidden, activation="relu")
        self.logits = keras.layers.Dense(10)

    def call(self, x, training=False):
        return self.logits(self.hidden(self.flatten(x)))


def make_dataset(size, batch):
    rng = np.random.default_rng(0)
    images = rng.normal(size=(size, 8, 8)).astype("float32")
    labels = [str(n) for n in rng.integers(0, 10, size=size)]
    return tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch, drop_remainder=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=32)
    args = parser.parse_args()
    model = Classifier(args.hidden)
    optimizer = keras.optimizers.SGD(0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=True)
    def train_step(images, labels):
        targets = tf.strings.to_number(labels, out_type=tf.int32)
        with tf.GradientTape() as tape:
            loss = loss_fn(targets, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for epoch in range(args.epochs):
        for images, labels in make_dataset(256, 32):
            loss = train_step(images, labels)
        print(f"epoch {epoch}: loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
