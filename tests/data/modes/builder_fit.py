"""A builder that compiles its model with jit_compile=True under the strategy's scope."""

import keras
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def build_model():
    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse", jit_compile=True)  # expect: XLA305
    return model


if __name__ == "__main__":
    build_model().fit(np.ones((16, 4), "float32"), np.ones((16, 1), "float32"), batch_size=8, epochs=1, verbose=0)
