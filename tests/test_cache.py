"""The result cache: unchanged files skip TensorFlow entirely; any edit is seen."""

from __future__ import annotations

from conftest import run_json

BLOCK_TF = "import sys\nsys.modules['tensorflow'] = None\n"  # any TensorFlow import now fails

MODEL = """import tensorflow as tf
from helpers import squash


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def step(x):
    return squash(x) * 2.0
"""
HOST_HELPER = "import tensorflow as tf\n\n\ndef squash(x):\n    return tf.numpy_function(lambda a: a, [x], tf.float32)\n"
PLAIN_HELPER = "import tensorflow as tf\n\n\ndef squash(x):\n    return tf.tanh(x)\n"


def _project(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "helpers.py").write_text(HOST_HELPER)
    blocker = tmp_path / "no_tf"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_TF)
    return {"PYTHONPATH": str(blocker)}


def _codes(report):
    return sorted((f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in report["findings"])


def test_unchanged_file_is_answered_without_tensorflow(tmp_path):
    no_tf = _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--device", "cpu"]
    first, _ = run_json(str(tmp_path / "model.py"), *cache)
    assert _codes(first) == [("XLA001", "helpers.py", 5)]
    again, code = run_json(str(tmp_path / "model.py"), *cache, env=no_tf)  # TensorFlow cannot load now
    assert again["findings"] == first["findings"] and again["entries"] == first["entries"] and code == 1
    blocked, _ = run_json(str(tmp_path / "model.py"), "--no-cache", "--device", "cpu", env=no_tf)
    assert "TensorFlow is not installed" in blocked["errors"][0]["message"]


def test_an_edit_to_the_file_or_an_imported_module_is_never_served_stale(tmp_path):
    _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--device", "cpu"]
    run_json(str(tmp_path / "model.py"), *cache)
    (tmp_path / "helpers.py").write_text(PLAIN_HELPER)
    report, _ = run_json(str(tmp_path / "model.py"), *cache)
    assert [c for c in _codes(report) if c[0] == "XLA001"] == []
    (tmp_path / "model.py").write_text(MODEL.replace("    return squash", "    tf.print(x)\n    return squash"))
    report, _ = run_json(str(tmp_path / "model.py"), *cache)
    assert ("XLA001", "model.py", 7) in _codes(report)


def test_options_are_part_of_the_key(tmp_path):
    _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    gpu, _ = run_json(str(tmp_path / "model.py"), *cache, "--device", "gpu")
    cpu, _ = run_json(str(tmp_path / "model.py"), *cache, "--device", "cpu")
    assert gpu["device"] == "gpu" and cpu["device"] == "cpu"
    assert "on gpu" in gpu["findings"][0]["message"] and "on cpu" in cpu["findings"][0]["message"]
