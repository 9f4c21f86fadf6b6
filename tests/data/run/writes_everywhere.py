"""Writes in its working directory and next to itself, through Python and through tf.io.gfile, then trains."""

import os

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))

with open("notes.txt", "a") as notes:  # a file that exists
    notes.write("run started\n")
with open("new_log.txt", "w") as log:
    log.write("step 0\n")
for target in (lambda: open(os.path.join(HERE, "beside.txt"), "w").close(),
               lambda: tf.io.gfile.makedirs(os.path.join(HERE, "exports"))):
    try:
        target()
    except PermissionError as error:
        print("not written:", error)


@tf.function(jit_compile=True)
def step(x):
    return tf.reduce_sum(x * x)


for batch in tf.data.Dataset.range(8).batch(4):
    step(batch)
