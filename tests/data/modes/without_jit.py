"""The same strategy without jit_compile: a plain distributed step and a model Keras keeps off XLA ('auto')."""

import keras
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")


def replica_loss(x):
    return tf.reduce_mean(tf.square(model(x)))


@tf.function(input_signature=[tf.TensorSpec([8, 4], tf.float32)])
def distributed_loss(x):
    return strategy.reduce("SUM", strategy.run(replica_loss, args=(x,)), axis=None)


if __name__ == "__main__":
    print(float(distributed_loss(tf.ones((8, 4)))))
    model.fit(np.ones((16, 4), "float32"), np.ones((16, 1), "float32"), batch_size=8, epochs=1, verbose=0)
