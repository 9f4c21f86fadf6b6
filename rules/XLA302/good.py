"""XLA302 keras-runs-without-xla: jit_compile=True asks Keras for XLA on every device."""

import keras

features = keras.Input((16,))
hidden = keras.layers.Dense(32, activation="relu")(features)
classifier = keras.Model(features, keras.layers.Dense(4)(hidden))
classifier.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"], jit_compile=True)
