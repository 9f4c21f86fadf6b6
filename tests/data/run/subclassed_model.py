"""A subclassed Keras model trained batch by batch with `train_on_batch`, checked with `test_on_batch`
and used with `predict_on_batch` (the keras-io subclassing guide's model, driven by hand)."""

import keras
import numpy as np
import tensorflow as tf


class ResidualBlock(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.inner = keras.layers.Dense(units, activation="relu")
        self.outer = keras.layers.Dense(units)

    def call(self, x):
        return x + self.outer(self.inner(x))


class Regressor(keras.Model):
    def __init__(self, units=16):
        super().__init__()
        self.embed = keras.layers.Dense(units)
        self.block = ResidualBlock(units)
        self.head = keras.layers.Dense(1)

    def call(self, x, training=False):
        return self.head(self.block(self.embed(x)))


def main(epochs=3):
    x = np.random.default_rng(0).normal(size=(256, 5)).astype("float32")
    batches = tf.data.Dataset.from_tensor_slices((x, x.sum(axis=1, keepdims=True))).batch(32)
    model = Regressor()
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    for epoch in range(epochs):
        for step, (x_batch, y_batch) in enumerate(batches.as_numpy_iterator()):
            loss = model.train_on_batch(x_batch, y_batch)
            if step % 4 == 0:
                print(epoch, step, loss, model.test_on_batch(x_batch, y_batch))
    print(model.predict_on_batch(x[:4]).shape)


if __name__ == "__main__":
    main()
