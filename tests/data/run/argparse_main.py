"""A training script configured from the command line (the usual `argparse` + `main()` shape): the model's size,
the batch size and the learning rate come from its arguments, the compiled step is defined inside `main()`."""

import argparse

import keras
import numpy as np
import tensorflow as tf


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="train a small classifier")
    parser.add_argument("--units", type=int, nargs="+", default=[32, 32])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-2)
    parser.add_argument("--steps", type=int, default=1000)
    return parser.parse_args(argv)


def build_model(units, classes):
    layers = [keras.layers.Dense(n, activation="relu") for n in units]
    return keras.Sequential([keras.Input((12,)), *layers, keras.layers.Dense(classes)])


def main():
    args = parse_args()
    model = build_model(args.units, classes=4)
    optimizer = keras.optimizers.SGD(args.learning_rate, momentum=0.9)
    rng = np.random.default_rng(0)
    features = rng.normal(size=(256, 12)).astype("float32")
    labels = rng.integers(0, 4, size=256).astype("int64")
    dataset = (tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(256)
               .batch(args.batch_size, drop_remainder=True).repeat())

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, tf.reduce_mean(tf.cast(tf.argmax(logits, axis=1) == y, tf.float32))

    for step, (x, y) in enumerate(dataset.take(args.steps)):
        loss, accuracy = train_step(x, y)
        if step % 100 == 0:
            print(f"step {step}: loss {float(loss):.3f} accuracy {float(accuracy):.3f}")


if __name__ == "__main__":
    main()
