"""A two-file project: the model uses a custom layer imported from a sibling module, trained with `fit` under XLA."""

import keras
import numpy as np

from two_file_layers import ValueHistogram


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 10)).astype("float32")
    y = rng.integers(0, 3, size=48)
    inputs = keras.Input((10,))
    features = keras.layers.Concatenate()([inputs, ValueHistogram(bins=5)(inputs)])
    model = keras.Model(inputs, keras.layers.Dense(3)(features))
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=True)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)


if __name__ == "__main__":
    main()
