"""Trains at its top level, writing a checkpoint and a log line every step: a clean compiled step."""

import os

import tensorflow as tf

w = tf.Variable(tf.zeros([4, 1]))
optimizer = tf.keras.optimizers.Adam(0.01)
checkpoint = tf.train.Checkpoint(w=w, optimizer=optimizer)
os.makedirs("checkpoints", exist_ok=True)


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w - y))
    optimizer.apply_gradients([(tape.gradient(loss, w), w)])
    return loss


for step in range(5):
    loss = train_step(tf.random.normal([16, 4]), tf.random.normal([16, 1]))
    checkpoint.save("checkpoints/ckpt")
    with open("train.log", "a") as log:
        log.write(f"{step} {float(loss)}\n")
