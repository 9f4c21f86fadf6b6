"""A directory of 50 files in the shape of real example code, through older commits and this checkout.

    python bench/example_dir.py [--before REV ...] [--repeat N] [--files N] [--keep DIR]

Writes N files (default 50) to a temporary directory, five kinds in turn as keras-io examples and
TensorFlow tutorials have them: a compiled Sequential classifier, a functional CNN, a subclassed
model behind ``build_model()``, a custom training step (``GradientTape`` in a ``tf.function``) and a
``tf.data`` map function over a small dataset; every third file of a kind has an XLA blocker
(a NumPy or Python callback, a string op). Sizes vary per file. Then, as bench/isolation_cost.py,
runs each side with ``--jobs 1`` and ``--jobs 2`` and prints wall and CPU time, the speedup, peak
memory and the cost per file against the first ``REV`` (default: the shared-worker commit), and
how many entries and findings each side reported; last, the check of a one-function file, the start
that a second job cannot shorten, and the ``--jobs 2`` speedup it leaves possible. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from _harness import checkouts, measure, print_sides, side_by_side, xlalint_command
from isolation_cost import SHARED_WORKER

SEQUENTIAL = '''import keras
import tensorflow as tf

model = keras.Sequential([
    keras.Input(({width},)),
    keras.layers.Dense({units}, activation="relu"),
    keras.layers.Dropout(0.2),
    keras.layers.BatchNormalization(),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]{jit})
'''
FUNCTIONAL = '''import keras
from keras import layers


def conv_block(x, filters):
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    return layers.MaxPooling2D()(x)


inputs = keras.Input(shape=({size}, {size}, 3))
x = conv_block(inputs, {units})
x = conv_block(x, {units2})
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(5)(x)
model = keras.Model(inputs, outputs, name="cnn_{index}")
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
'''
SUBCLASSED = '''import keras
import numpy as np
import tensorflow as tf


class Residual(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.outer = keras.layers.Dense(units, activation="gelu"), keras.layers.Dense(units)

    def call(self, x):
        y = self.outer(self.inner(x))
{blocker}        return x + y


def build_model():
    inputs = keras.Input(({units},))
    x = Residual({units})(inputs)
    x = keras.layers.LayerNormalization()(x)
    return keras.Model(inputs, keras.layers.Dense(1)(x))
'''
TRAIN_STEP = '''import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input(({width},)), keras.layers.Dense({units}, activation="relu"), keras.layers.Dense(3)])
optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(input_signature=[tf.TensorSpec([{batch}, {width}], tf.float32), tf.TensorSpec([{batch}], tf.int32)])
def train_step(features, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(features, training=True)) + tf.add_n(model.losses or [0.0])
    grads, _ = tf.clip_by_global_norm(tape.gradient(loss, model.trainable_weights), 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
{blocker}    return loss
'''
DATA_MAP = '''import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None, None, 3], tf.uint8), tf.TensorSpec([], tf.string)])
def preprocess(image, label):
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize(image, [{size}, {size}])
    image = (image - 0.5) * 2.0
{blocker}    return image, tf.strings.length(label)


images = np.zeros((4, {size}, {size}, 3), np.uint8)
dataset = tf.data.Dataset.from_tensor_slices((images, ["a", "b", "c", "d"])).map(preprocess).batch(2)
'''
BLOCKERS = {
    "subclassed": "        y = tf.numpy_function(lambda v: v, [y], tf.float32)\n",
    "train_step": "    loss = tf.py_function(lambda v: v, [loss], tf.float32)\n",
    "data_map": "    image = tf.numpy_function(lambda v: v, [image], tf.float32)\n",
}
KINDS = (("sequential", SEQUENTIAL), ("functional", FUNCTIONAL), ("subclassed", SUBCLASSED),
         ("train_step", TRAIN_STEP), ("data_map", DATA_MAP))


def write_files(directory: Path, count: int) -> list[str]:
    paths = []
    for index in range(count):
        kind, template = KINDS[index % len(KINDS)]
        turn = index // len(KINDS)
        blocked = turn % 3 == 2
        text = template.format(index=index, width=8 + turn, units=16 + 4 * turn, units2=8 + 2 * turn,
                               size=16 + 4 * (turn % 4), batch=4 + turn % 3,
                               jit=", jit_compile=True" if blocked else "",
                               blocker=BLOCKERS.get(kind, "") if blocked else "")
        path = directory / f"{index:02d}_{kind}.py"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


ONE_FUNCTION = '''import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def add_one(x):
    return x + 1
'''


def serial_start(directory: Path, repeat: int) -> float:
    """Median wall seconds of checking one one-function file: the start no second job shortens (the
    interpreter, the tracing server's TensorFlow import and preload, a trace, the report)."""
    path = directory / "one_function" / "add_one.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(ONE_FUNCTION, encoding="utf-8")
    walls = sorted(measure(xlalint_command([str(path)], "--no-cache", "--device", "cpu"))["wall_s"]
                   for _ in range(repeat))
    return walls[(len(walls) - 1) // 2]


def _counts(stdout: str) -> str:
    try:
        report = json.loads(stdout)
    except ValueError:
        return "no report"
    return (f"{len(report['entries'])} entries, {len(report['findings'])} findings, "
            f"{len(report['errors'])} file errors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", action="append", help=f"a commit to compare with (default: {SHARED_WORKER}); "
                        "repeat it for several")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration (median shown)")
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--keep", help="write the files here and keep them (default: a temporary directory)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="xlalint-examples-") as tmp:
        directory = Path(args.keep or tmp)
        directory.mkdir(parents=True, exist_ok=True)
        files = write_files(directory, args.files)
        with checkouts(args.before or [SHARED_WORKER]) as sides:
            result = side_by_side(files, sides, args.repeat)
        start = serial_start(directory, args.repeat)
    print(f"{len(files)} generated files ({', '.join(k for k, _ in KINDS)}), --device cpu --no-cache, median of "
          f"{args.repeat} run(s); load average after: {os.getloadavg()[0]:.1f}")
    print_sides(result, list(sides), len(files))
    for side in sides:
        print(f"  {side}: " + "; ".join(f"--jobs {j}: {_counts(result[(side, j)]['stdout'])}" for j in (1, 2)))
    one = result[("this checkout", 1)]["wall_s"]
    print(f"  this checkout, one one-function file: {start:.1f} s, the part of a run that a second job does not "
          f"shorten; with it, --jobs 2 can be at most about {one / (start + (one - start) / 2):.2f}x of --jobs 1 "
          f"(Amdahl's law on the {one:.1f} s run)")


if __name__ == "__main__":
    main()
