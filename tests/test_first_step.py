"""``first_step`` (``xlalint run --first-step``, and the check command's import run again after zeros broke it):
a captured call is answered with its real outputs, without XLA, on the real TensorFlow."""

import pytest
import tensorflow as tf

from xlalint.backend.keras_sites import LayerRecorder
from xlalint.backend.run.capture import Capture

pytestmark = pytest.mark.tf


def test_a_call_after_the_program_turns_auto_clustering_on_runs_eagerly():
    """Before ``set_jit(True)`` a call runs on its traced graph (its Python ran once, at the trace); after it, that
    graph would be auto-clustered and compiled, so the call runs eagerly (its Python runs again)."""
    capture = Capture(LayerRecorder(), lambda: None, patience=100, first_step=True)
    runs = []

    @tf.function
    def step(x):
        runs.append(1)  # Python: once per trace, and at each call run eagerly
        return x * 2

    def call() -> float:
        x = tf.constant(3.0)
        where = {"path": __file__, "line": 20, "kind": "tf.function", "name": "step"}
        return float(capture.call(step, (x,), {}, step.python_function.__code__, where, lambda: step(x)))

    assert (call(), call(), len(runs)) == (6.0, 6.0, 1)
    tf.config.optimizer.set_jit(True)
    try:
        assert (call(), len(runs)) == (6.0, 2)
    finally:
        tf.config.optimizer.set_jit(False)
