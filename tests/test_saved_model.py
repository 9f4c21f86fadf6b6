"""SavedModel directories: each serving signature is checked; findings name the node and function."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from helpers import run_json

pytestmark = pytest.mark.tf  # every test here needs TensorFlow


class Scorer(tf.Module):
    def __init__(self):
        self.scale = tf.Variable(tf.ones([4]))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def score(self, x):
        return {"score": tf.reduce_sum(x * self.scale, axis=1)}

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def debug(self, x):
        return {"y": tf.numpy_function(lambda a: a * np.float32(2), [x], tf.float32)}


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "scorer"
    module = Scorer()
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.score, "debug": module.debug})
    return path


def test_each_signature_is_checked_and_agrees_with_the_compiler(saved_model):
    report, code = run_json(str(saved_model), "--device", "cpu")
    verdicts = {e["name"]: e["verdict"] for e in report["entries"]}
    assert verdicts == {"serving_default": "compatible", "debug": "incompatible"}
    (finding,) = [f for f in report["findings"] if f["severity"] == "error"]
    assert finding["op_type"] == "PyFunc" and "node `PyFunc` in function" in finding["message"]
    assert code == 1
    loaded = tf.saved_model.load(str(saved_model))
    x = tf.ones([2, 4])
    for name, expected in verdicts.items():
        jitted = tf.function(_caller(loaded.signatures[name]), jit_compile=True)
        try:
            jitted.experimental_get_compiler_ir(x)(stage="hlo")
            compiled = True
        except Exception:
            compiled = False
        assert compiled == (expected == "compatible"), name


def _caller(signature):
    return lambda t: signature(x=t)
