"""A compiled step with a signature over a MirroredStrategy of two virtual CPUs, all made at module level."""

import keras
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


def replica_loss(x):
    return tf.reduce_mean(tf.square(model(x)))


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([8, 4], tf.float32)])
def distributed_loss(x):  # expect: XLA305
    return strategy.reduce("SUM", strategy.run(replica_loss, args=(x,)), axis=None)


if __name__ == "__main__":
    print(float(distributed_loss(tf.ones((8, 4)))))
