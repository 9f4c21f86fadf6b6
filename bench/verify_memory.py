"""Peak memory of a Keras ResNet50 training step on CPU, with and without XLA, as ``--verify`` measures it.

    python bench/verify_memory.py              # batch 8
    python bench/verify_memory.py --batch 4

Runs ``verify_entry`` on the training step (SGD with momentum, 224x224 images, random
weights) and prints its memory fields and their ratio. Each figure comes from a fresh child
process (see xlalint/backend/peak_memory.py). Takes minutes on a small CPU. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import time

import keras
import tensorflow as tf

from xlalint.backend.discover import Candidate
from xlalint.backend.verify import verify_entry


def training_step(batch: int) -> Candidate:
    model = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3))
    optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
    optimizer.build(model.trainable_variables)

    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    specs = [tf.TensorSpec([batch, 224, 224, 3], tf.float32), tf.TensorSpec([batch], tf.int32)]
    return Candidate("train_step", 1, "function", function=tf.function(train_step), python_function=train_step,
                     specs=specs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    started = time.perf_counter()
    result = verify_entry(training_step(args.batch), device="cpu", steps=1, runs=1)
    fields = ("device", "compiled", "training_step", "memory_method", "xla_peak_bytes", "tf_peak_bytes",
              "compile_s", "xla_step_s", "tf_step_s", "error")
    print(json.dumps({k: result[k] for k in fields}, indent=1))
    xla, plain = result["xla_peak_bytes"], result["tf_peak_bytes"]
    if xla and plain:
        print(f"batch {args.batch}: XLA {xla / 2**20:.0f} MiB, TF {plain / 2**20:.0f} MiB, "
              f"XLA/TF {xla / plain:.2f} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
