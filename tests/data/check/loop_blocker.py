"""A tutorial-style script that trains at its top level: the compiled step prints with tf.print."""

import tensorflow as tf

w = tf.Variable(tf.ones([4, 1]))
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w - y))
    optimizer.apply_gradients([(tape.gradient(loss, w), w)])
    tf.print("loss", loss)
    return loss


for step in range(20):
    train_step(tf.random.normal([16, 4]), tf.random.normal([16, 1]))
