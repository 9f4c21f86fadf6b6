"""Keras decisions that only a GPU machine would show, asked of Keras itself on this CPU machine.

Keras' TensorFlow backend asks one question, ``_is_gpu_available()``, before it
picks cuDNN for LSTM/GRU; answering it "yes" makes real Keras build what it
builds on a GPU machine. xlalint traces on the CPU and must predict the same.
"""

from __future__ import annotations

import importlib

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import REPO, run_json, run_xlalint

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

FIXTURE = REPO / "fixtures" / "keras_recurrent.py"
LSTM_LINE, BIDIRECTIONAL_LINE, DROPOUT_LINE = 7, 15, 19
SPEC = tf.TensorSpec([4, 12, 8], tf.float32)


@pytest.fixture
def keras_sees_a_gpu(monkeypatch):
    rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    monkeypatch.setattr(rnn, "_is_gpu_available", lambda: True)


def _op_types(concrete) -> set[str]:
    graphs = [concrete.graph, *(f.graph for f in concrete.graph._functions.values() if hasattr(f, "graph"))]
    return {op.type for graph in graphs for op in graph.get_operations()}


def _runs_cudnn(model) -> bool:
    return "CudnnRNNV3" in _op_types(tf.function(lambda x: model(x, training=False)).get_concrete_function(SPEC))


def _found(report: dict) -> list[tuple[str, int, str]]:
    """(code, line, entry) for each entry a finding names: one finding per place lists every entry that reaches it."""
    return sorted((f["code"], f["line"], entry) for f in report["findings"] if f["code"] in ("XLA001", "XLA301")
                  for entry in f["entries"])


def test_gpu_prediction_for_recurrent_layers():
    report, code = run_json(str(FIXTURE), "--device", "gpu", "--no-cache")
    assert code == 1
    # `tag` calls `tagger` under its own jit_compile=True: the model is checked in it, its XLA301 kept; `reader`'s
    # cuDNN op is no error: Keras runs that model without XLA (its own entry: no XLA error, its decision said)
    assert _found(report) == sorted([
        ("XLA001", LSTM_LINE, "tag"), ("XLA301", LSTM_LINE, "tagger"), ("XLA301", BIDIRECTIONAL_LINE, "reader"),
        ("XLA301", DROPOUT_LINE, "summarizer")])
    [both] = [f["message"] for f in report["findings"] if f["line"] == BIDIRECTIONAL_LINE]
    assert "layers `backward_lstm_1` and `forward_lstm_1`" in both  # one decision
    verdicts = {e["name"]: e["verdict"] for e in report["entries"]}
    assert verdicts == {"tag": "incompatible", "scorer": "compatible",
                        "reader": "compatible", "summarizer": "compatible"}
    ready = next(line for line in run_xlalint(str(FIXTURE), "--device", "gpu").stdout.splitlines()
                 if line.startswith("ready for jit_compile=True"))
    assert "::scorer" in ready and "::summarizer" not in ready  # compatible, but Keras keeps XLA off


def test_cpu_has_no_cudnn_finding():
    report, code = run_json(str(FIXTURE), "--device", "cpu", "--no-cache")
    assert code == 0 and not _found(report)
    for name, fn in gt.entries(gt.load_module(FIXTURE)).items():
        assert gt.compile_error(fn) is None, name


def test_keras_on_a_gpu_machine_agrees(keras_sees_a_gpu):
    module = gt.load_module(FIXTURE)
    assert {name: gt.keras_keeps_xla(model) for name, model in gt.keras_models(module).items()} == {
        "tagger": False, "scorer": True, "reader": False, "summarizer": False}
    assert "CudnnRNNV3" in _op_types(module.tag.get_concrete_function())
    assert {name: _runs_cudnn(model) for name, model in gt.keras_models(module).items()} == {
        "tagger": True, "scorer": False, "reader": True, "summarizer": False}


SUBCLASSED = """\
import keras


class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.zoom = keras.layers.RandomZoom(0.2)
        self.dense = keras.layers.Dense(10)

    def call(self, x):
        return self.dense(self.zoom(x))


classifier = Classifier()
"""


def test_a_model_that_cannot_be_traced_still_gets_what_keras_decides(tmp_path):
    path = tmp_path / "subclassed.py"
    path.write_text(SUBCLASSED)
    report, _ = run_json(str(path), "--device", "cpu", "--no-cache")
    assert [e["verdict"] for e in report["entries"]] == ["unknown"]  # no inputs known: not traced
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("XLA301", 7)]
    assert not gt.keras_keeps_xla(gt.load_module(path).classifier)
