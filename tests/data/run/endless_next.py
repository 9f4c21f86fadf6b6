"""Takes each step's batch with next() from an endless dataset, until stopped (a distribution tutorial's loop
with no end): no for loop over the dataset ends it, so patience must leave the loop."""

import sys

import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else None  # None: until interrupted
dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat().batch(16)


@tf.function(jit_compile=True)
def train_step(inputs):
    features, labels = inputs
    return tf.reduce_sum(labels - 0.3 * features)


iterator = iter(dataset)
step = 0
while steps is None or step < steps:
    loss = train_step(next(iterator))
    step += 1
