"""A built-in Keras layer (MixUp, which XLA cannot compile) constructed at module level, called in a compiled step."""

import keras
import tensorflow as tf

mix = keras.layers.MixUp()


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([4, 8, 8, 3], tf.float32)])
def augment(images):
    scaled = images / 255.0
    return mix(scaled, training=True)


if __name__ == "__main__":
    print(augment(tf.ones((4, 8, 8, 3))).shape)
