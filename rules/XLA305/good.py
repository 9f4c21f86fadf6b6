"""XLA305 fixed: each replica's own computation is compiled, inside the step strategy.run calls."""

import keras
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


@tf.function(jit_compile=True)
def mean_square(x):
    return tf.reduce_mean(tf.square(model(x)))


def replica_loss(x):
    return mean_square(x)


@tf.function
def distributed_loss(x):
    per_replica = strategy.run(replica_loss, args=(x,))
    return strategy.reduce("SUM", per_replica, axis=None)


def main():
    data = np.ones((16, 4), "float32")
    for x in strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(data).batch(8)):
        print(float(distributed_loss(x)))


if __name__ == "__main__":
    main()
