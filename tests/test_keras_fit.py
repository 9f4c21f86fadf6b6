"""The train step Keras compiles for ``fit``, and Keras' own jit_compile decision, against the real thing.

Each scenario in fixtures/keras_fit/ is a small training script; the truth is Keras and XLA running
one step of ``fit`` with the model's own ``jit_compile`` (as Keras resolved it), on small data.
One xlalint run over the folder (``--device cpu``) is shared by the tests.
"""

from __future__ import annotations

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import REPO, run_json

pytestmark = pytest.mark.tf  # the full mode traces with TensorFlow

FOLDER = REPO / "fixtures" / "keras_fit"


@pytest.fixture(scope="module")
def cpu_run() -> tuple[dict, int]:
    return run_json(str(FOLDER.relative_to(REPO)), "--device", "cpu", "--no-cache")


def _findings(report: dict, name: str) -> set[tuple[str, int]]:
    rel = str((FOLDER / name).relative_to(REPO))
    return {(f["code"], f["line"]) for f in report["findings"] if f["path"] == rel}


def _first_step_error(model) -> str | None:
    """The error of one train step with the model's own jit_compile, or None when it trains."""
    try:
        with tf.device("/CPU:0"):
            model.fit(*gt.sample_batch(model), batch_size=4, epochs=1, verbose=0)
    except Exception as error:  # the compiler's refusal is the answer
        return str(error)
    return None


@pytest.mark.parametrize("name, op_types", [("custom_loss.py", {"PyFunc"}),
                                             ("train_step_override.py", {"PrintV2", "StringFormat"})])  # tf.print's ops
def test_blocker_in_what_fit_compiles_is_reported_at_its_line(cpu_run, name, op_types):
    """A custom loss calling NumPy, a train_step override calling tf.print: the first step fails under
    XLA, and xlalint reports the op at the user's line in the MODEL.fit entry."""
    report, code = cpu_run
    models = gt.compiled_models(gt.load_module(FOLDER / name))
    assert models and all(model.jit_compile is True for model in models.values())
    for model in models.values():
        error = _first_step_error(model)
        assert error is not None and any(op in error for op in op_types), error
    assert _findings(report, name) == gt.expected(FOLDER / name)
    blockers = [f for f in report["findings"] if f["path"].endswith(name) and f["severity"] == "error"]
    assert blockers and {f["op_type"] for f in blockers} <= op_types
    assert {e for f in blockers for e in f["entries"]} == {f"{m}.fit" for m in models}
    assert code == 1


def test_layer_that_keras_keeps_off_xla_is_a_warning_not_an_error(cpu_run):
    """StringLookup with jit_compile=True: Keras drops XLA and trains; xlalint warns at the layer's line."""
    report, _ = cpu_run
    (model,) = gt.compiled_models(gt.load_module(FOLDER / "string_lookup.py")).values()
    assert model.jit_compile is False and _first_step_error(model) is None
    assert _findings(report, "string_lookup.py") == gt.expected(FOLDER / "string_lookup.py") == {("XLA303", 11)}
    (warning,) = [f for f in report["findings"] if f["path"].endswith("string_lookup.py")]
    assert warning["severity"] == "warning" and "string_lookup" in warning["message"]
    rows = [r for f in report["coverage"]["files"] if f["path"].endswith("string_lookup.py") for r in f["by_entry"]]
    assert rows and all(r["xla"] is None and not r["ready"] and "StringLookup" in r["xla_off"] for r in rows)


def test_auto_follows_keras_on_each_device(cpu_run, monkeypatch):
    """jit_compile="auto": Keras keeps XLA off on this CPU-only machine (XLA302, info, exit 0); with its
    device question answered "a GPU is here" it turns XLA on, and the step compiles under XLA."""
    report, code = cpu_run
    module = gt.load_module(FOLDER / "auto_jit.py")
    assert module.build_model().jit_compile is False
    assert _findings(report, "auto_jit.py") == gt.expected(FOLDER / "auto_jit.py") == {("XLA302", 29)}
    assert [f["severity"] for f in report["findings"] if f["path"].endswith("auto_jit.py")] == ["info"]

    listed = tf.config.list_physical_devices
    gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
    monkeypatch.setattr(tf.config, "list_physical_devices",
                        lambda kind=None: listed(kind) + ([gpu] if kind in (None, "GPU") else []))
    on_gpu = module.build_model()
    monkeypatch.undo()
    assert on_gpu.jit_compile is True and _first_step_error(on_gpu) is None
    gpu_report, gpu_code = run_json(str((FOLDER / "auto_jit.py").relative_to(REPO)), "--device", "gpu", "--no-cache")
    assert gpu_report["findings"] == [] and gpu_code == 0
    assert {e["name"]: (e["jit_compile"], e["verdict"]) for e in gpu_report["entries"]} == {
        "build_model.fit": (True, "compatible")}  # the built model is checked in the step fit compiles
