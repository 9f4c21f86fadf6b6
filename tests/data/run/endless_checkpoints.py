"""Trains until stopped, writing a checkpoint and a log line every step (a pretraining script's shape)."""

import sys

import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else None  # None: until interrupted
weights = tf.Variable(tf.zeros([4, 1]))
optimizer = tf.keras.optimizers.SGD(0.01)
checkpoint = tf.train.Checkpoint(weights=weights)
manager = tf.train.CheckpointManager(checkpoint, "checkpoints", max_to_keep=2)
data = tf.data.Dataset.from_tensor_slices(tf.random.normal([64, 4])).batch(8, drop_remainder=True).repeat()


@tf.function(jit_compile=True)
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, weights) - 1.0))
    optimizer.apply_gradients([(tape.gradient(loss, weights), weights)])
    return loss


step = 0
with open("train.log", "a") as log:
    for x in data:
        loss = train_step(x)
        manager.save()
        log.write(f"{step} {float(loss)}\n")
        step += 1
        if steps is not None and step >= steps:
            break
