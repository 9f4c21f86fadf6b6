"""XLA301 keras-layer-disables-xla: layers inside the model that make Keras drop XLA for all of it."""

import keras

zoom = keras.layers.RandomZoom(0.2)  # expect: XLA301
images = keras.Input((32, 32, 3))
features = keras.layers.Conv2D(8, 3, activation="relu")(zoom(images))
features = keras.layers.GlobalAveragePooling2D()(features)
augmented_classifier = keras.Model(images, keras.layers.Dense(10)(features))


def build_model():
    words = keras.Input((4,), dtype="string")
    ids = keras.layers.StringLookup(vocabulary=["a", "b", "c"])(words)  # expect: XLA301
    vectors = keras.layers.Embedding(8, 4)(ids)
    return keras.Model(words, keras.layers.Dense(1)(keras.layers.Flatten()(vectors)))
