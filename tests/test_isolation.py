"""One file, one answer: no file's result depends on the other files of the run, and nothing outlives it.

Every test runs the real command line on real TensorFlow; the traps are the ones users meet in
multi-file repositories (copy-pasted scripts, same-named helpers, modules that patch TensorFlow
or fork at import, a ./json.py in the working directory).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from helpers import alive, repo_env, run_json, run_xlalint

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

BLOCKER = """import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def f(x):
    return tf.numpy_function(lambda v: v, [x], tf.float32){comment}
"""
MODEL = """import tensorflow as tf
from helpers import step


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def train(x):
    return step(x)
"""
CLEAN_HELPER = "def step(x):\n    return x * 2.0\n"
BLOCKING_HELPER = "import tensorflow as tf\n\n\ndef step(x):\n    return tf.py_function(lambda v: v, [x], tf.float32)\n"
PATCHES_TF = """import tensorflow as tf

tf.numpy_function = lambda fn, inp, tout, **kwargs: tf.identity(inp[0])


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def g(x):
    return x + 1.0
"""
FORKS = """import os
import tensorflow as tf

os.fork()


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def h(x):
    return x + 1.0
"""
SETS_KERAS_STATE = """import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
keras.config.set_floatx("float64")
tf.config.optimizer.set_jit(True)


@keras.saving.register_keras_serializable(package="isolation")
class Dense(keras.layers.Layer):
    def call(self, x):
        return x * 2.0


model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4), Dense()])
"""
PLAIN_KERAS = """import keras

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
model.compile(optimizer="sgd", loss="mse")
twin = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])  # not compiled: its forward pass is traced
"""
NO_AUTOGRAPH = """import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)], autograph=False)
def k(x):
    if tf.reduce_sum(x) > 0:
        return x
    return -x
"""
READS_CONFIG = """import json

import tensorflow as tf

SCALE = json.load(open(__file__.replace("model.py", "cfg.json")))["scale"]


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def f(x):
    if SCALE:
        return x * SCALE
    return tf.numpy_function(lambda v: v, [x], tf.float32)
"""
HANGS = """import os
import subprocess
import sys
import time

import tensorflow as tf

helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
pids = [os.getpid(), helper.pid, os.getppid()]  # the file, what it started, its server (or, not forking, xlalint)
if os.environ.get("XLALINT_NO_FORK") != "1":  # the server is a clone: its parent imported TensorFlow
    with open(f"/proc/{os.getppid()}/stat") as stat:
        pids.append(int(stat.read().rsplit(")", 1)[1].split()[1]))
with open(os.environ["MARKER"] + ".tmp", "w") as out:
    out.write(" ".join(map(str, pids)))
os.rename(os.environ["MARKER"] + ".tmp", os.environ["MARKER"])
time.sleep(600)
"""


# Each file is checked in a child forked from the TensorFlow server on Linux, in a fresh interpreter
# elsewhere: the traps below are asked of both ways (XLALINT_NO_FORK=1 takes the second here).
WAYS = pytest.mark.parametrize("way", [{}, {"XLALINT_NO_FORK": "1"}], ids=["forked-child", "fresh-interpreter"])


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _findings(report: dict) -> list[tuple]:
    return sorted((f["path"], f["line"], f["code"]) for f in report["findings"])


@WAYS
def test_identical_functions_in_two_files_each_get_their_own_answer(tmp_path, way):
    _write(tmp_path, {"a.py": BLOCKER.format(comment=""),
                      "b.py": BLOCKER.format(comment="  # xlalint: ignore[XLA001]")})
    report, code = run_json("a.py", "b.py", "--device", "cpu", "--no-cache", cwd=tmp_path, env=way)
    assert _findings(report) == [("a.py", 7, "XLA001")]  # b's comment is used: no XLA801
    assert code == 1


def test_same_named_helpers_of_sibling_packages_are_not_shared(tmp_path):
    _write(tmp_path, {"proj/a/model.py": MODEL, "proj/a/helpers.py": CLEAN_HELPER,
                      "proj/b/model.py": MODEL, "proj/b/helpers.py": BLOCKING_HELPER})
    report, code = run_json("proj", "--device", "cpu", "--no-cache", cwd=tmp_path)
    assert [(f["path"], f["line"], f["code"]) for f in report["findings"] if f["code"] == "XLA001"] == [
        ("proj/b/helpers.py", 5, "XLA001")]
    assert code == 1


def test_modules_that_patch_tensorflow_or_set_keras_state_leave_the_next_files_answer_alone(tmp_path):
    """Keras and TensorFlow are imported once, before the files: a file's global settings (mixed
    precision, floatx, auto-clustering, a registered class) must not reach the next file's child."""
    _write(tmp_path, {"patch.py": PATCHES_TF, "z.py": BLOCKER.format(comment=""),
                      "a_plain.py": PLAIN_KERAS, "b_state.py": SETS_KERAS_STATE, "c_plain.py": PLAIN_KERAS})
    report, code = run_json("a_plain.py", "b_state.py", "c_plain.py", "patch.py", "z.py", "--device", "cpu",
                            "--no-cache", "--jobs", "1", cwd=tmp_path)
    assert ("z.py", 7, "XLA001") in _findings(report) and code == 1
    before, after = ([{k: v for k, v in e.items() if k != "path"} for e in report["entries"] if e["path"] == name]
                     for name in ("a_plain.py", "c_plain.py"))
    assert before == after and [e["name"] for e in before] == ["model.fit", "twin"]  # fit checks `model`
    assert {f["code"] for f in report["findings"] if f["path"] == "a_plain.py"} == {
        f["code"] for f in report["findings"] if f["path"] == "c_plain.py"}
    state = [e for e in report["entries"] if e["path"] == "b_state.py"]
    assert [e["name"] for e in state] == ["model"] and state[0]["ops"] > before[1]["ops"]  # float16 casts


@WAYS
def test_a_module_that_forks_at_import_is_reported_once_and_the_next_file_still_counts(tmp_path, way):
    _write(tmp_path, {"forks.py": FORKS, "z.py": BLOCKER.format(comment="")})
    report, code = run_json("forks.py", "z.py", "--device", "cpu", "--no-cache", cwd=tmp_path, env=way)
    assert [(e["path"], e["name"]) for e in report["entries"]] == [("forks.py", "h"), ("z.py", "f")]
    assert ("z.py", 7, "XLA001") in _findings(report) and report["errors"] == [] and code == 1


@pytest.mark.tf  # starts the CLI itself
def test_the_working_directory_does_not_shadow_the_standard_library(tmp_path):
    """`xlalint` (the console script) run where a ./json.py lives: the worker imports the real json."""
    _write(tmp_path, {"json.py": "raise SystemExit('the json.py of the working directory was imported')\n",
                      "sub/m.py": BLOCKER.format(comment="")})
    script = os.path.join(os.path.dirname(sys.executable), "xlalint")
    done = subprocess.run([script, "sub/m.py", "--device", "cpu", "--no-cache", "--format", "json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert _findings(json.loads(done.stdout)) == [("sub/m.py", 7, "XLA001")], done.stderr


def test_autograph_false_is_honoured(tmp_path):
    """Without AutoGraph a Python `if` on a tensor cannot be traced: the entry is not ready for XLA."""
    _write(tmp_path, {"ag.py": NO_AUTOGRAPH})
    report, code = run_json("ag.py", "--device", "cpu", "--no-cache", cwd=tmp_path)
    assert [(e["name"], e["verdict"]) for e in report["entries"]] == [("k", "unknown")]
    assert "OperatorNotAllowedInGraphError" in report["entries"][0]["error"]
    assert not any(f["code"] == "XLA403" for f in report["findings"]) and code == 0  # listed, not a failure
    assert run_xlalint("ag.py", "--device", "cpu", "--no-cache", "--strict", cwd=tmp_path).returncode == 1


def test_a_data_file_read_at_import_is_part_of_the_cache_key(tmp_path):
    _write(tmp_path, {"model.py": READS_CONFIG, "cfg.json": '{"scale": 2}'})
    cache = ["--cache-dir", str(tmp_path / "cache"), "--device", "cpu"]
    first, _ = run_json("model.py", *cache, cwd=tmp_path)
    (tmp_path / "cfg.json").write_text('{"scale": 0}')
    second, code = run_json("model.py", *cache, cwd=tmp_path)
    assert not any(f["code"] == "XLA001" for f in first["findings"])
    assert ("model.py", 12, "XLA001") in _findings(second) and code == 1


@WAYS
def test_a_crash_quotes_its_own_output_only(tmp_path, way):
    _write(tmp_path, {"loud.py": "import sys\nimport tensorflow as tf\nprint('loud.py was here', file=sys.stderr)\n"
                                 "\n\n@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])\n"
                                 "def f(x):\n    return x\n",
                      "dies.py": "import os\nimport tensorflow as tf\nos._exit(3)\n"})
    report, _ = run_json("loud.py", "dies.py", "--device", "cpu", "--no-cache", cwd=tmp_path, env=way)
    assert report["errors"] == [{"path": "dies.py", "message": "the traced module exited with code 3",
                                 "notice": False}]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_report_does_not_depend_on_grouping_order_or_jobs(tmp_path, seed):
    """Property: any order and grouping of files with cross-file traps gives each file's lone answer."""
    files = {"a.py": BLOCKER.format(comment=""), "b.py": BLOCKER.format(comment="  # xlalint: ignore[XLA001]"),
             "patch.py": PATCHES_TF, "forks.py": FORKS, "c.py": BLOCKER.format(comment="")}
    _write(tmp_path, files)
    alone = {name: run_json(name, "--device", "cpu", "--no-cache", cwd=tmp_path)[0] for name in files}
    rng = random.Random(seed)
    names = list(files)
    rng.shuffle(names)
    jobs = str(rng.choice([1, 2]))
    together, _ = run_json(*names, "--device", "cpu", "--no-cache", "--jobs", jobs, cwd=tmp_path)
    for name in files:
        for key in ("entries", "findings", "errors"):
            assert [item for item in together[key] if item["path"] == name] == alone[name][key], (name, key)


@pytest.mark.tf  # starts the CLI itself
@WAYS
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_run_and_everything_it_started(tmp_path, sig, code, way):
    """The hanging file writes its marker outside the checked tree (the guard refuses writes inside it)."""
    project = tmp_path / "project"
    _write(project, {"hangs.py": HANGS, "other.py": BLOCKER.format(comment="")})
    marker = tmp_path / "pids"
    run = subprocess.Popen([sys.executable, "-m", "xlalint", "hangs.py", "other.py", "--jobs", "2", "--no-cache",
                            "--device", "cpu", "--format", "sarif"], cwd=project, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=repo_env({"MARKER": str(marker), **way}))
    deadline = time.monotonic() + 300
    while not marker.exists() and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
    started = [int(pid) for pid in marker.read_text().split()]
    assert all(alive(pid) for pid in started)
    run.send_signal(sig)
    out, err = run.communicate(timeout=60)
    assert run.returncode == code, err
    assert f"run cut short by {sig.name}" in err
    assert json.loads(out)["runs"][0]["invocations"][0]["executionSuccessful"] is False
    time.sleep(0.5)  # SIGKILLed orphans are reaped by init
    assert [pid for pid in started if alive(pid)] == []
