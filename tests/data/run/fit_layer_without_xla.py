"""A model compiled with jit_compile=True around a layer that does not support XLA: Keras turns XLA off
for fit (with a warning) and trains without it, as it does for keras.layers.StringLookup."""

import numpy as np
import keras


class HostKernel(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.supports_jit = False

    def build(self, shape):
        self.kernel = self.add_weight(shape=(shape[-1], self.units))

    def call(self, x):
        return x @ self.kernel


model = keras.Sequential([keras.Input((4,)), HostKernel(2)])
model.compile(optimizer="adam", loss="mse", jit_compile=True)
model.fit(np.zeros((16, 4), "float32"), np.zeros((16, 2), "float32"), batch_size=8, epochs=1, verbose=0)
print("jit_compile:", model.jit_compile)
