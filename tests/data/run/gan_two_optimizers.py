"""A small GAN in a custom training loop (the DCGAN tutorial's shape): a generator and a discriminator,
each with its own optimizer and its own compiled step."""

import argparse

import keras
import numpy as np
import tensorflow as tf

NOISE = 8


def make_generator():
    return keras.Sequential([keras.Input((NOISE,)), keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(4, activation="tanh")])


def make_discriminator():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(16), keras.layers.LeakyReLU(0.2),
                             keras.layers.Dense(1)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    generator, discriminator = make_generator(), make_discriminator()
    generator_optimizer = keras.optimizers.Adam(1e-3)
    discriminator_optimizer = keras.optimizers.Adam(1e-3)
    cross_entropy = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function(jit_compile=True)
    def train_discriminator(real):
        noise = tf.random.normal([tf.shape(real)[0], NOISE])
        with tf.GradientTape() as tape:
            real_logits = discriminator(real, training=True)
            fake_logits = discriminator(generator(noise, training=False), training=True)
            loss = (cross_entropy(tf.ones_like(real_logits), real_logits)
                    + cross_entropy(tf.zeros_like(fake_logits), fake_logits))
        grads = tape.gradient(loss, discriminator.trainable_variables)
        discriminator_optimizer.apply_gradients(zip(grads, discriminator.trainable_variables))
        return loss

    @tf.function(jit_compile=True)
    def train_generator(batch_size):
        noise = tf.random.normal([batch_size, NOISE])
        with tf.GradientTape() as tape:
            fake_logits = discriminator(generator(noise, training=True), training=False)
            loss = cross_entropy(tf.ones_like(fake_logits), fake_logits)
        grads = tape.gradient(loss, generator.trainable_variables)
        generator_optimizer.apply_gradients(zip(grads, generator.trainable_variables))
        return loss

    real_data = np.random.default_rng(0).normal(1.0, 0.5, size=(128, 4)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices(real_data).shuffle(128).batch(args.batch_size, drop_remainder=True)
    for epoch in range(args.epochs):
        for real in dataset:
            d_loss = train_discriminator(real)
            g_loss = train_generator(args.batch_size)
        print(f"epoch {epoch}: discriminator {float(d_loss):.3f} generator {float(g_loss):.3f}")


if __name__ == "__main__":
    main()
