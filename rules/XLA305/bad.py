"""XLA305 variables-on-several-devices: the whole distributed step compiled, over two virtual CPUs."""

import keras
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


def replica_loss(x):
    return tf.reduce_mean(tf.square(model(x)))


@tf.function(jit_compile=True)
def distributed_loss(x):  # expect: XLA305
    return strategy.reduce("SUM", strategy.run(replica_loss, args=(x,)), axis=None)


def main():
    batches = tf.data.Dataset.from_tensor_slices(np.ones((16, 4), "float32")).batch(8)
    for x in strategy.experimental_distribute_dataset(batches):
        print(float(distributed_loss(x)))


if __name__ == "__main__":
    main()
