"""Keras `fit` with a custom loss and a custom metric, compiled with XLA, then `evaluate` and `predict`
(the keras-io guide "Customizing what happens in fit" in its simplest form)."""

import keras
import numpy as np
from keras import ops


def smooth_l1(y_true, y_pred):
    error = ops.abs(y_true - y_pred)
    return ops.mean(ops.where(error < 1.0, 0.5 * ops.square(error), error - 0.5), axis=-1)


class WithinTolerance(keras.metrics.Metric):
    """The share of predictions within 0.5 of the target."""

    def __init__(self, name="within_tolerance", **kwargs):
        super().__init__(name=name, **kwargs)
        self.hits = self.add_weight(name="hits", initializer="zeros")
        self.seen = self.add_weight(name="seen", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        close = ops.cast(ops.abs(y_true - y_pred) < 0.5, "float32")
        self.hits.assign_add(ops.sum(close))
        self.seen.assign_add(ops.cast(ops.size(close), "float32"))

    def result(self):
        return self.hits / ops.maximum(self.seen, 1.0)


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 6)).astype("float32")
    y = (x @ rng.normal(size=(6, 2))).astype("float32")
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss=smooth_l1, metrics=[WithinTolerance()], jit_compile=True)
    model.fit(x[:64], y[:64], batch_size=16, epochs=1, validation_data=(x[64:], y[64:]), verbose=0)
    print(model.evaluate(x[64:], y[64:], batch_size=16, verbose=0))
    print(model.predict(x[64:], batch_size=16, verbose=0).shape)


if __name__ == "__main__":
    main()
