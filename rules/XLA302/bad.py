"""XLA302 keras-runs-without-xla: the default jit_compile="auto" trains without XLA on a machine without a GPU."""

import keras

features = keras.Input((16,))
hidden = keras.layers.Dense(32, activation="relu")(features)
classifier = keras.Model(features, keras.layers.Dense(4)(hidden))
classifier.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])  # expect: XLA302
