"""A clean custom training loop: a compiled train step, and a test step that runs without XLA."""

import argparse

import keras
import numpy as np
import tensorflow as tf


def make_dataset(size, batch, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(size, 16)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    accuracy = keras.metrics.SparseCategoricalAccuracy()

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def test_step(x, y):
        logits = model(x, training=False)
        accuracy.update_state(y, logits)
        return loss_fn(y, logits)

    train, test = make_dataset(512, 64, 0), make_dataset(128, 64, 1)
    for epoch in range(args.epochs):
        for x, y in train:
            loss = train_step(x, y)
        accuracy.reset_state()
        for x, y in test:
            test_loss = test_step(x, y)
        print(f"epoch {epoch}: loss {float(loss):.3f} test {float(test_loss):.3f} "
              f"accuracy {float(accuracy.result()):.3f}")


if __name__ == "__main__":
    main()
