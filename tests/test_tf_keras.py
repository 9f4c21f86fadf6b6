"""tf-keras (Keras 2): its models found, their train step judged with tf-keras's own jit decision, its ``fit``
captured by ``xlalint run``; against the scripts run for real.

tf-keras is not a requirement of the suite: without it every test here is skipped (the version matrix,
``bench/version_matrix.py``, runs them where it is installed). Each scenario in fixtures/tf_keras/ is a
training script; the truth is the script run for real, its ``fit`` compiled as tf-keras decides.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

import groundtruth as gt
from helpers import REPO, repo_env, run_json

pytestmark = pytest.mark.tf  # the full mode traces with TensorFlow

FOLDER = REPO / "fixtures" / "tf_keras"


@pytest.fixture(autouse=True)
def _needs_tf_keras():
    if importlib.util.find_spec("tf_keras") is None:
        pytest.skip("tf-keras is not installed (pip install tf-keras matching TensorFlow's release)")


@pytest.fixture(scope="module")
def cpu_run() -> tuple[dict, int]:
    return run_json(str(FOLDER.relative_to(REPO)), "--device", "cpu", "--no-cache")


def _real_run(name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FOLDER / name)], capture_output=True, text=True, timeout=600,
                          env=repo_env({"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}))


def _entries(report: dict, name: str) -> dict:
    return {e["name"]: e for e in report["entries"] if e["path"].endswith(name)}


def _findings(report: dict, name: str) -> set[tuple[str, int]]:
    return {(f["code"], f["line"]) for f in report["findings"] if f["path"].endswith(name)}


def test_numpy_loss_in_a_jit_compiled_tf_keras_fit_is_the_compilers_error(cpu_run):
    """``import tf_keras``, compile(jit_compile=True): the real fit fails in XLA on the PyFunc, and xlalint
    reports it at the loss's line in the ``build_model.fit`` entry."""
    report, code = cpu_run
    real = _real_run("numpy_loss.py")
    assert real.returncode != 0 and "PyFunc" in real.stderr, real.stderr[-2000:]
    assert _findings(report, "numpy_loss.py") == gt.expected(FOLDER / "numpy_loss.py")
    fit = _entries(report, "numpy_loss.py")["build_model.fit"]
    assert fit["verdict"] == "incompatible" and fit["jit_compile"] is True and code == 1


def test_tf_keras_default_keeps_xla_off_through_tf_keras(cpu_run):
    """``tf.keras`` under TF_USE_LEGACY_KERAS=1 is tf-keras; its default jit_compile trains without XLA (the
    real run trains), which xlalint says (XLA302, info) with tf-keras's reason."""
    report, _ = cpu_run
    real = _real_run("legacy_tf_keras.py")
    assert real.returncode == 0, real.stderr[-2000:]
    assert _findings(report, "legacy_tf_keras.py") == gt.expected(FOLDER / "legacy_tf_keras.py")
    entries = _entries(report, "legacy_tf_keras.py")
    assert set(entries) == {"build_model", "build_model.fit"}
    assert entries["build_model.fit"]["jit_compile"] is False and "tf-keras" in entries["build_model.fit"]["xla_off"]


def test_xlalint_run_captures_a_tf_keras_fit_instead_of_compiling_it():
    """The script's own fit under ``xlalint run``: its train step is captured at the first batch and
    answered, so the run ends with the finding instead of XLA's failure."""
    done = subprocess.run([sys.executable, "-m", "xlalint", "run", "--format", "json", "--device", "cpu",
                           str(FOLDER / "numpy_loss.py")], capture_output=True, text=True, timeout=600,
                          cwd=REPO, env=repo_env())

    report = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr[-2000:]
    assert report["run"]["stopped"] == "ended", report["run"]
    assert _findings(report, "numpy_loss.py") == gt.expected(FOLDER / "numpy_loss.py")
    (step,) = report["entries"]
    assert step["name"] == "Functional.train_step" and step["jit_compile"] is True
