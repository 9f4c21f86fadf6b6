"""XLA301 keras-layer-disables-xla: preprocessing runs in the input pipeline, the model stays compilable."""

import keras
import tensorflow as tf

zoom = keras.layers.RandomZoom(0.2)  # used by `augment` in tf.data, not part of the model
lookup = keras.layers.StringLookup(vocabulary=["a", "b", "c"])

images = keras.Input((32, 32, 3))
features = keras.layers.Conv2D(8, 3, activation="relu")(images)
features = keras.layers.GlobalAveragePooling2D()(features)
classifier = keras.Model(images, keras.layers.Dense(10)(features))


def build_model():
    ids = keras.Input((4,), dtype="int64")  # StringLookup already ran in the pipeline
    vectors = keras.layers.Embedding(8, 4)(ids)
    return keras.Model(ids, keras.layers.Dense(1)(keras.layers.Flatten()(vectors)))


def augment(image, label):
    return zoom(image, training=True), label


def to_ids(words, label):
    return lookup(words), label


def training_data(dataset: tf.data.Dataset) -> tf.data.Dataset:
    return dataset.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
