"""A model that overrides `train_step` and logs its loss with `tf.print`, trained with `fit` under XLA
(the shape of many XLA bug reports: tf.print has no XLA kernel)."""

import sys

import keras
import numpy as np
import tensorflow as tf


class LoggingModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        tf.print("loss:", loss)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


def main(epochs):
    inputs = keras.Input((4,))
    outputs = keras.layers.Dense(1)(keras.layers.Dense(8, activation="relu")(inputs))
    model = LoggingModel(inputs, outputs)
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
    model.fit(x, x[:, :1], batch_size=16, epochs=epochs, verbose=0)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
