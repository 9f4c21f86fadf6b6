"""XLA303 keras-drops-jit-compile: the lookup runs in the input pipeline, Keras compiles the model with XLA."""

import keras
import tensorflow as tf

lookup = keras.layers.StringLookup(vocabulary=["a", "b", "c"])


def build_model():
    ids = keras.Input((4,), dtype="int64")  # StringLookup already ran in the pipeline
    vectors = keras.layers.Embedding(8, 4)(ids)
    model = keras.Model(ids, keras.layers.Dense(1)(keras.layers.Flatten()(vectors)))
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    return model


def to_ids(words, target):
    return lookup(words), target


def training_data(dataset: tf.data.Dataset) -> tf.data.Dataset:
    return dataset.map(to_ids, num_parallel_calls=tf.data.AUTOTUNE)
