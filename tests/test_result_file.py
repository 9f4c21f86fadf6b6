"""The result file a tracing child hands to the parent: what comes back equals the result's JSON, and a
result file that is cut short or not one becomes the file's error."""

from __future__ import annotations

import enum
import json
import marshal
import subprocess
import sys

import pytest

from helpers import REPO, repo_env
from xlalint.process.child_end import death
from xlalint.process.result_file import read_result, write_result
from xlalint.core.wire import file_result
from xlalint.tracing.workers import _outcome

GRAPHS = sorted((REPO / "fixtures" / "graphs").glob("*.json"))


def _saved_result() -> tuple[dict, str]:
    """A file's result holding every saved traced entry (graphs of real traces), and its JSON text."""
    entries = [json.loads(path.read_text(encoding="utf-8")) for path in GRAPHS]
    text = json.dumps(file_result("model.py", entries=entries))
    return json.loads(text), text


def test_a_traced_result_comes_back_as_its_json(tmp_path):
    result, text = _saved_result()
    path = str(tmp_path / "0.result")
    write_result(path, result)
    assert [p.name for p in tmp_path.iterdir()] == ["0.result"]  # written aside, then renamed
    back = read_result(path)
    assert back == json.loads(text)
    assert sum(len(e["graph"]["nodes"]) for e in back["entries"]) > 1000


_CHILD = """
import json, os, sys
from xlalint.backend.keras_sites import LayerRecorder
recorder = LayerRecorder()
recorder.install()
from xlalint.backend.worker import check_file
from xlalint.process.result_file import write_result
path, out = sys.argv[1:]
result = check_file({"path": path, "targets": [], "discover": True, "verify": None, "result": out}, recorder)
write_result(out, result)
with open(out + ".json", "w", encoding="utf-8") as handle:
    json.dump(result, handle)
print(os.getcwd())
"""

_MODEL = """
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
model.compile(optimizer="adam", loss="mse")
optimizer = keras.optimizers.SGD(0.1)


@tf.function(input_signature=[tf.TensorSpec([4, 8], tf.float32), tf.TensorSpec([4, 2], tf.float32)])
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, 3], tf.int32)])
def unique(values):
    return tf.unique(tf.reshape(values, [-1])).y
"""


@pytest.mark.tf
def test_a_result_as_the_worker_made_it_comes_back_as_its_json(tmp_path):
    """The child's own result, before any JSON: Keras' fit step and its decisions, a model its step covers,
    a compiled function with an unknown dimension. Called in-process, the worker gives back the folder it was
    called in (the import ran in a scratch mirror of it, removed since)."""
    (tmp_path / "model.py").write_text(_MODEL, encoding="utf-8")
    out = str(tmp_path / "0.result")
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "model.py"), out], cwd=tmp_path,
                          env=repo_env({"CUDA_VISIBLE_DEVICES": ""}),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == str(tmp_path.resolve())
    back = read_result(out)
    with open(out + ".json", encoding="utf-8") as handle:
        assert back == json.load(handle)
    assert {e["name"]: (e["graph"] is not None, bool(e.get("covers"))) for e in back["entries"]} == {
        "model.fit": (True, True), "train_step": (True, False), "unique": (True, False)}


class _Mode(enum.IntEnum):
    FAST = 1


class _Name(str):
    pass


def test_values_marshal_refuses_come_back_as_json_writes_them(tmp_path):
    result = {**file_result("model.py"), "seconds": type("Seconds", (float,), {})(1.5),
              "deps": [_Name("a.py")], "mode": _Mode.FAST}
    with pytest.raises(ValueError):
        marshal.dumps(result)
    path = str(tmp_path / "0.result")
    write_result(path, result)
    back = read_result(path)
    assert back == json.loads(json.dumps(result))
    assert [type(back["seconds"]), type(back["deps"][0]), type(back["mode"])] == [float, str, int]


def _written(tmp_path, data: bytes) -> dict:
    files = {"result": str(tmp_path / "0.result"), "log": str(tmp_path / "0.log")}
    (tmp_path / "0.result").write_bytes(data)
    (tmp_path / "0.log").write_text("Traceback (most recent call last):\nMemoryError\n", encoding="utf-8")
    return files


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "a list"])
def test_a_result_file_cut_short_or_not_one_is_the_files_error(tmp_path, damage):
    whole = marshal.dumps(_saved_result()[0])
    data = {"truncated": whole[: len(whole) // 2], "garbage": b"\x00not a result" * 50, "empty": b"",
            "a list": marshal.dumps([1, 2])}[damage]
    files = _written(tmp_path, data)
    with pytest.raises(ValueError):
        read_result(files["result"])
    expected = death(-9, files["log"])
    outcome = _outcome(None, {"path": "model.py"}, files, {"code": -9}, None)
    assert outcome == file_result("model.py", expected)
    assert "MemoryError" in expected
    assert list(tmp_path.iterdir()) == []  # the run keeps no file's result or log
