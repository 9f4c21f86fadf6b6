"""Real models of the libraries users check, built from config (no weights, nothing downloaded).

Each test is skipped where its package is not installed (versions used: docs/real-models.md).
xlalint discovers and traces the model as a user file would define it; the compiler is asked the
same question: its forward pass under ``jit_compile=True``, lowered on concrete inputs of the
model's own structure with ``experimental_get_compiler_ir``.
"""

from __future__ import annotations

import textwrap

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import run_json

pytestmark = pytest.mark.tf  # every test here needs TensorFlow


def _check(tmp_path, source: str) -> tuple[dict, object]:
    """xlalint's report on ``source`` as a user file, and that file loaded here."""
    path = tmp_path / "user_model.py"
    path.write_text(textwrap.dedent(source))
    report, _ = run_json(path.name, "--device", "cpu", "--no-cache", cwd=tmp_path)
    return report, gt.load_module(path)


def _verdicts(report: dict) -> dict[str, str]:
    assert report["errors"] == []
    return {e["name"]: e["verdict"] for e in report["entries"]}


def _blockers(report: dict) -> set[tuple[str, int]]:
    return {(f["code"], f["line"]) for f in report["findings"] if f["severity"] == "error"}


def _model_compiles(model, inputs) -> bool:
    return gt.lowers(lambda x: model(x, training=False), inputs)


def _zeros(structure, fill: int):
    """Zeros in the structure of a model's Keras inputs, every unknown dim ``fill``."""
    return tf.nest.map_structure(
        lambda t: tf.zeros([fill if d is None else d for d in t.shape], tf.as_dtype(t.dtype)), structure)


def test_keras_hub_bert_backbone(tmp_path):
    pytest.importorskip("keras_hub")
    report, module = _check(tmp_path, """\
        import keras_hub

        backbone = keras_hub.models.BertBackbone(vocabulary_size=64, num_layers=1, num_heads=2, hidden_dim=16,
                                                 intermediate_dim=32, max_sequence_length=8)
        """)
    assert set(module.backbone.input) == {"token_ids", "padding_mask", "segment_ids"}  # a dict model
    assert _model_compiles(module.backbone, _zeros(module.backbone.input, 8))
    assert _verdicts(report) == {"backbone": "compatible"} and _blockers(report) == set()
    unknown = next(f["message"] for f in report["findings"] if f["code"] == "XLA104")
    assert "`padding_mask`: int32[None, None]" in unknown and "keras_tensor" not in unknown


def test_tf_keras_functional_model_with_dict_inputs(tmp_path):
    pytest.importorskip("tf_keras")
    report, module = _check(tmp_path, """\
        import tf_keras

        token_ids = tf_keras.Input((4,), dtype="int32", name="token_ids")
        mask = tf_keras.Input((4,), name="mask")
        pooled = tf_keras.layers.GlobalAveragePooling1D()(tf_keras.layers.Embedding(16, 3)(token_ids))
        model = tf_keras.Model({"token_ids": token_ids, "mask": mask}, tf_keras.layers.Dense(4)(pooled) * mask)
        """)
    assert _model_compiles(module.model, _zeros(module.model.input, 2))
    assert _verdicts(report) == {"model": "compatible"} and _blockers(report) == set()
    named, _ = run_json("user_model.py::model", "--device", "cpu", "--no-cache", cwd=tmp_path)
    assert _verdicts(named) == {"model": "compatible"}  # named, it is a model too (not "a function")


def test_transformers_tf_bert_model(tmp_path):
    pytest.importorskip("tf_keras")
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "TFBertModel"):
        pytest.skip("this transformers has no TensorFlow models (removed in 5.0)")
    report, module = _check(tmp_path, """\
        from transformers import BertConfig, TFBertModel

        config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=32, max_position_embeddings=16)
        model = TFBertModel(config)
        """)
    assert _model_compiles(module.model, module.model.dummy_inputs)
    assert _verdicts(report) == {"model": "compatible"} and _blockers(report) == set()


def test_tensorflow_text_tokenizer(tmp_path):
    pytest.importorskip("tensorflow_text")
    report, module = _check(tmp_path, """\
        import tensorflow as tf
        import tensorflow_text as tf_text

        tokenizer = tf_text.WhitespaceTokenizer()


        @tf.function(input_signature=[tf.TensorSpec([2], tf.string)])
        def count_tokens(sentences):
            return tokenizer.tokenize(sentences).row_lengths()
        """)
    sentences = tf.constant(["a b", "c"])
    assert module.count_tokens(sentences).numpy().tolist() == [2, 1]  # it runs without XLA
    assert not gt.lowers(module.count_tokens.python_function, sentences)
    assert _verdicts(report) == {"count_tokens": "incompatible"}
    assert _blockers(report) == {("XLA002", 8), ("XLA001", 9)}  # the string argument; the tokenizer's op
