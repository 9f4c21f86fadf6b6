"""XLA303 keras-drops-jit-compile: a StringLookup inside the model makes Keras ignore jit_compile=True."""

import keras


def build_model():
    words = keras.Input((4,), dtype="string")
    ids = keras.layers.StringLookup(vocabulary=["a", "b", "c"])(words)  # expect: XLA303
    vectors = keras.layers.Embedding(8, 4)(ids)
    model = keras.Model(words, keras.layers.Dense(1)(keras.layers.Flatten()(vectors)))
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    return model
