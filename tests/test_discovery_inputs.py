"""What discovery traces: Keras models with dict or nested inputs, helper tf.functions, failed traces.

Each verdict is asked of the real compiler too: the model's forward pass (or the entry) under
``jit_compile=True``, lowered with ``experimental_get_compiler_ir`` on concrete inputs of the
model's own structure.
"""

from __future__ import annotations

import re

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import REPO, run_json

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

FIXTURES = REPO / "fixtures" / "discovery"


@pytest.fixture(scope="module")
def report() -> dict:
    found, _ = run_json(str(FIXTURES.relative_to(REPO)), "--device", "cpu", "--no-cache")
    return found


def _entries(report: dict, name: str) -> dict[str, tuple[str, str | None]]:
    path = f"fixtures/discovery/{name}"
    return {e["name"]: (e["verdict"], e["error"]) for e in report["entries"] if e["path"] == path}


def _findings(report: dict, name: str) -> set[tuple[str, int, str]]:
    path = f"fixtures/discovery/{name}"
    return {(f["code"], f["line"], f["entry"]) for f in report["findings"]
            if f["path"] == path and f["severity"] != "info"}


def _concrete(structure, batch: int = 2):
    """Concrete tensors in the structure of a model's Keras inputs (unknown dims: ``batch``)."""
    def value(tensor):
        shape = [batch if d is None else d for d in tensor.shape]
        return tf.fill(shape, "a") if tensor.dtype == "string" else tf.zeros(shape, tensor.dtype)
    return tf.nest.map_structure(value, structure)


def _model_compiles(model) -> bool:
    try:
        structure = model.input
    except AttributeError:  # a Sequential built with build() knows only its list of inputs
        structure = model.inputs[0]
    return gt.lowers(lambda inputs: model(inputs, training=False), _concrete(structure))


def test_models_are_traced_with_their_own_input_structure(report):
    module = gt.load_module(FIXTURES / "keras_inputs.py")
    compiler = {name: "compatible" if _model_compiles(model) else "incompatible"
                for name, model in gt.keras_models(module).items()}
    assert compiler == {"dict_model": "compatible", "nested_model": "compatible", "string_model": "incompatible",
                        "built_sequential": "compatible"}
    assert _entries(report, "keras_inputs.py") == {name: (verdict, None) for name, verdict in compiler.items()}
    assert _findings(report, "keras_inputs.py") == {
        (code, line, "string_model") for code, line in gt.expected(FIXTURES / "keras_inputs.py")}


def test_arguments_are_named_after_the_keras_inputs(report):
    messages = [f["message"] for f in report["findings"] if f["code"] == "XLA002"
                and f["path"] == "fixtures/discovery/keras_inputs.py"]
    named = sorted(re.search(r"argument `([^`]+)`", m).group(1) for m in messages)
    assert len(named) == 2 and named[1] == "text" and re.fullmatch(r"input_layer(_\d+)?", named[0])
    assert not any("keras_tensor" in m for m in messages)


def test_a_called_helper_is_part_of_its_entry(report):
    module = gt.load_module(FIXTURES / "helper_called.py")
    assert gt.compile_error(module.clean) is None
    assert _entries(report, "helper_called.py") == {"clean": ("compatible", None)}
    _, code = run_json("fixtures/discovery/helper_called.py", "--device", "cpu")
    assert code == 0


def test_a_helpers_blocker_is_its_callers_and_an_uncalled_function_still_needs_a_signature(report):
    module = gt.load_module(FIXTURES / "helper_blocker.py")
    assert "AsString" in gt.compile_error(module.blocked)
    entries = _entries(report, "helper_blocker.py")
    assert set(entries) == {"blocked", "unused"} and entries["blocked"] == ("incompatible", None)
    verdict, error = entries["unused"]
    assert verdict == "unknown" and "has no input_signature" in error and "FILE::unused --spec" in error
    assert _findings(report, "helper_blocker.py") == {
        (code, line, "blocked") for code, line in gt.expected(FIXTURES / "helper_blocker.py")}


def test_a_failed_trace_gives_the_exceptions_own_message_its_line_and_a_hint(report):
    module = gt.load_module(FIXTURES / "trace_failure.py")
    with pytest.raises(ValueError) as raised:
        tf.function(lambda x: module.model(x, training=False)).get_concrete_function(tf.TensorSpec([None, 4]))
    sentence = re.search(r"Dimension size must be [^']+", str(raised.value)).group(0)
    verdict, error = _entries(report, "trace_failure.py")["model"]
    assert verdict == "unknown"
    assert error.startswith("tracing failed: ValueError: ") and "in user code" not in error
    assert sentence in error and "(at fixtures/discovery/trace_failure.py:7)" in error
    assert "hint: call `model` on inputs of these specs (float32[None,4])" in error
