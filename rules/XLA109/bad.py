"""XLA109 retraced-in-run: sentences of different lengths, each length a new trace and XLA compilation."""

import tensorflow as tf

embedding = tf.Variable(tf.random.normal([100, 16], seed=1))


@tf.function(jit_compile=True)
def encode(tokens):  # expect: XLA109
    print("tracing encode")  # Python runs only while TensorFlow traces
    return tf.reduce_mean(tf.gather(embedding, tokens), axis=1)


def main():
    sentences = [[1, 2, 3], [4, 5, 6, 7, 8], [9, 10], [11, 12, 13, 14], [15, 16, 17, 18, 19, 20]]
    for sentence in sentences:
        vector = encode(tf.constant([sentence]))
        print(len(sentence), float(tf.norm(vector)))


if __name__ == "__main__":
    main()
