"""A model whose first layer is a TextVectorization (a string input): Keras runs it without XLA, and it trains."""

import keras
import tensorflow as tf

texts = tf.constant([["the cat sat"], ["a dog ran far"], ["birds fly high"], ["the dog sat"]])
vectorize = keras.layers.TextVectorization(max_tokens=50, output_sequence_length=6)
vectorize.adapt(texts)
inputs = keras.Input((1,), dtype="string")
embedded = keras.layers.Embedding(50, 4)(vectorize(inputs))
model = keras.Model(inputs, keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(embedded)))

if __name__ == "__main__":
    model.compile("sgd", "mse")  # jit_compile="auto"
    model.fit(texts, tf.ones((4, 1)), epochs=2, verbose=0)
    model.predict(texts, verbose=0)
