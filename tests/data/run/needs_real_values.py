"""A custom loop whose Python logic needs real values: accuracy from the counts the test step returns,
then an export step reached only after it."""

import numpy as np
import tensorflow as tf

weights = tf.Variable(tf.zeros([4, 2]))


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, tf.matmul(x, weights)))
    weights.assign_sub(0.1 * tape.gradient(loss, weights))
    return loss


@tf.function
def test_step(x, y):
    predicted = tf.argmax(tf.matmul(x, weights), axis=1, output_type=tf.int32)
    return tf.reduce_sum(tf.cast(predicted == y, tf.int32)), tf.shape(y)[0]


@tf.function(jit_compile=True)
def export_step(x):
    return tf.nn.softmax(tf.matmul(x, weights))


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
    correct = seen = 0
    for batch_x, batch_y in data:
        train_step(batch_x, batch_y)
    for batch_x, batch_y in data:
        right, count = test_step(batch_x, batch_y)
        correct, seen = correct + int(right), seen + int(count)
    print(f"accuracy {correct / seen:.3f}")
    print(export_step(x[:2]).numpy())


if __name__ == "__main__":
    main()
