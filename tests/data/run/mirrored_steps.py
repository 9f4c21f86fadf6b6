"""Custom training with tf.distribute.Strategy: MirroredStrategy over two virtual CPUs made by the script.

The shape of TensorFlow's tutorial, with XLA on the per-replica gradients: `strategy.run` calls the
step on each replica inside a plain `tf.function`, and the step calls a compiled function.
"""

import argparse

import keras
import numpy as np
import tensorflow as tf


def make_strategy():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def make_dataset(size, batch, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(size, 10)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(size).batch(batch, drop_remainder=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    strategy = make_strategy()
    global_batch = 16 * strategy.num_replicas_in_sync
    train = strategy.experimental_distribute_dataset(make_dataset(256, global_batch, 0))
    test = strategy.experimental_distribute_dataset(make_dataset(64, global_batch, 1))
    with strategy.scope():
        model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(32, activation="relu"),
                                  keras.layers.Dense(2)])
        optimizer = keras.optimizers.SGD(0.1)
        loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def compute_loss(labels, logits):
        return tf.nn.compute_average_loss(loss_object(labels, logits), global_batch_size=global_batch)

    @tf.function(jit_compile=True)
    def gradients_of(images, labels):
        with tf.GradientTape() as tape:
            loss = compute_loss(labels, model(images, training=True))
        return loss, tape.gradient(loss, model.trainable_variables)

    def train_step(inputs):
        loss, gradients = gradients_of(*inputs)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    def test_step(inputs):
        images, labels = inputs
        return compute_loss(labels, model(images, training=False))

    @tf.function
    def distributed_train_step(inputs):
        per_replica_losses = strategy.run(train_step, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    @tf.function
    def distributed_test_step(inputs):
        return strategy.run(test_step, args=(inputs,))

    for epoch in range(args.epochs):
        total_loss, batches = 0.0, 0
        for inputs in train:
            total_loss += distributed_train_step(inputs)
            batches += 1
        test_loss = 0.0
        for inputs in test:
            test_loss += strategy.reduce(tf.distribute.ReduceOp.SUM, distributed_test_step(inputs), axis=None)
        print(f"epoch {epoch}: loss {float(total_loss / batches):.4f} test loss {float(test_loss):.4f}")


if __name__ == "__main__":
    main()
