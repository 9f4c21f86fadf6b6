"""XLA109 fixed: sentences padded to one length, so XLA compiles encode once."""

import tensorflow as tf

embedding = tf.Variable(tf.random.normal([100, 16], seed=1))
LENGTH = 8


@tf.function(jit_compile=True)
def encode(tokens, mask):
    print("tracing encode")  # Python runs only while TensorFlow traces
    vectors = tf.gather(embedding, tokens) * mask[:, :, None]
    return tf.reduce_sum(vectors, axis=1) / tf.reduce_sum(mask, axis=1, keepdims=True)


def main():
    sentences = [[1, 2, 3], [4, 5, 6, 7, 8], [9, 10], [11, 12, 13, 14], [15, 16, 17, 18, 19, 20]]
    for sentence in sentences:
        padded = sentence + [0] * (LENGTH - len(sentence))
        mask = [1.0] * len(sentence) + [0.0] * (LENGTH - len(sentence))
        vector = encode(tf.constant([padded]), tf.constant([mask]))
        print(len(sentence), float(tf.norm(vector)))


if __name__ == "__main__":
    main()
