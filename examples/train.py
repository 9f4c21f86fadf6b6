"""A small image classifier and its training step, as users write them.

`xlalint examples/train.py` checks the training step (the Keras model with it,
as the step calls it), predict and the builder; the step logs a histogram with
a host callback, which XLA cannot compile.
"""

import numpy as np
import tensorflow as tf
import keras

BATCH, HEIGHT, WIDTH, CLASSES = 32, 28, 28, 10


def build_model() -> keras.Model:
    inputs = keras.Input((HEIGHT, WIDTH, 1))
    x = keras.layers.Conv2D(16, 3, activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inputs, outputs)


model = build_model()
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _log_histogram(values):
    counts, _ = np.histogram(values, bins=10)
    return counts.astype(np.int64)


@tf.function(input_signature=[
    tf.TensorSpec([BATCH, HEIGHT, WIDTH, 1], tf.float32),
    tf.TensorSpec([BATCH], tf.int32),
])
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    histogram = tf.numpy_function(_log_histogram, [logits], tf.int64)
    return loss, histogram


@tf.function(input_signature=[tf.TensorSpec([BATCH, HEIGHT, WIDTH, 1], tf.float32)])
def predict(images):
    return tf.argmax(model(images, training=False), axis=-1)


if __name__ == "__main__":
    images = np.random.rand(BATCH, HEIGHT, WIDTH, 1).astype("float32")
    labels = np.random.randint(0, CLASSES, BATCH).astype("int32")
    print(train_step(images, labels)[0].numpy())
