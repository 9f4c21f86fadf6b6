"""ResNet50 (Keras 3, no weights) under auto-clustering: a forward pass and a training step.

Measured by ``python bench/_autocluster_truth.py bench/models/resnet50_autocluster.py`` against TensorFlow's own clusters (docs/autocluster.md)."""

import keras
import tensorflow as tf

tf.config.optimizer.set_jit(True)

model = keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10)
optimizer = keras.optimizers.SGD(0.01)
model.build((None, 64, 64, 3))
optimizer.build(model.trainable_variables)


@tf.function(input_signature=[tf.TensorSpec([2, 64, 64, 3], tf.float32)])
def forward(images):
    return model(images, training=False)


@tf.function(input_signature=[tf.TensorSpec([2, 64, 64, 3], tf.float32), tf.TensorSpec([2], tf.int32)])
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
