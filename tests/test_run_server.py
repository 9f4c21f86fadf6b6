"""`xlalint run`'s server: TensorFlow imported once for several runs, each run in a fresh forked child.

Real runs of small scripts through the server the listed run commands share: the runs report the
same server, a variable a script sets before `import tensorflow` reaches TensorFlow in its own run
and in no other, what a preloaded library sets at its import reaches every run, without fork each run gets a fresh interpreter with the same answer, and a signal
to `xlalint run` stops the server, the run and what the script started.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import REPO, alive
from xlalint.backend.fork_server import FORK_SAFE
from xlalint.run.client import RunServer, run_script
from xlalint.run.report import run_report
from xlalint.settings.table import Options

pytestmark = pytest.mark.tf  # each server imports TensorFlow
forking = pytest.mark.skipif(not FORK_SAFE, reason="runs share a server only where it forks (Linux)")

STEP = """
    import tensorflow as tf


    @tf.function(jit_compile=True)
    def step(x):
        return tf.reduce_sum(x * 2.0)


    print(float(step(tf.ones([4]))))
"""
KERAS_STEP = """
    import os

    import keras
    import tensorflow as tf

    model = keras.Sequential([keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam()


    @tf.function(jit_compile=True)
    def train_step(x, y):
        with open(os.environ["XLALINT_TRACES"], "a") as traces:  # Python in the body runs once per trace
            traces.write("traced\\n")
        with tf.GradientTape() as tape:  # the model's and Adam's variables are built in the first call
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss


    for _ in range(3):
        train_step(tf.ones([4, 3]), tf.zeros([4, 2]))
"""
NESTED = """
    import tensorflow as tf


    @tf.function
    def scale(x):
        return x * 2.0


    def step(x):
        return tf.reduce_sum(scale(x))


    print(float(tf.function(step, jit_compile=True)(tf.ones([4]))))
"""
ENDLESS_AFTER_A_LOOP = """
    import tensorflow as tf


    @tf.function(jit_compile=True)
    def step(x):
        return x * 2.0


    for x in tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32)):
        step(x)
    while True:  # nothing new is traced any more: the run stops after --patience calls, not at its budget
        step(tf.constant(1.0))
"""
UNKNOWN_FLAG = "--xlalint_no_such_flag"
SCRIPTS = {
    "first.py": STEP,
    # TensorFlow reads TF_XLA_FLAGS at its first op, after its import: an unknown flag aborts the run there
    "sets_flags.py": f"import os\n\nos.environ['TF_XLA_FLAGS'] = '{UNKNOWN_FLAG}'\n" + textwrap.dedent(STEP),
    "after.py": STEP,
    # the server imported this library before forking the run (its import set a variable there); the
    # run sees the variable, as after its own import of the library in a fresh interpreter
    "preloaded.py": "import os\nimport sys\n\npreloaded = 'sets_at_import' in sys.modules\nimport sets_at_import\n\n"
                    "if preloaded and os.environ.get('XLALINT_SET_AT_IMPORT') == '1':\n"
                    + textwrap.indent(textwrap.dedent(STEP), "    "),
    # counts its traces in the file XLALINT_TRACES names
    "keras_step.py": KERAS_STEP,
    "nested.py": NESTED,
    "endless_after_a_loop.py": ENDLESS_AFTER_A_LOOP,
}
PRELOADED = "sets_at_import"  # a library the server preloads (as it would transformers)


def _run(server: RunServer, name: str) -> dict:
    return server.run(name, None, [], budget=60, patience=2)


def _captured(result: dict) -> list:
    assert "error" not in result, result
    return [(record["name"], record["jit_compile"], result["stop"]["kind"]) for record in result["records"]]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run_server")
    for name, source in SCRIPTS.items():
        (folder / name).write_text(textwrap.dedent(source))
    return folder


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Where keras_step.py counts its traces (outside the project, where the run may write)."""
    return tmp_path_factory.mktemp("traces") / "keras_step.txt"


@pytest.fixture(scope="module")
def forked(project, traces, tmp_path_factory):
    """Each script's result, in order, all from one server (as the listed run commands are), which
    preloads a library that sets an environment variable when it is imported."""
    libraries = tmp_path_factory.mktemp("libraries")
    (libraries / f"{PRELOADED}.py").write_text("import os\n\nos.environ['XLALINT_SET_AT_IMPORT'] = '1'\n")
    here, no_fork = os.getcwd(), os.environ.pop("XLALINT_NO_FORK", None)  # the forking server, whatever the caller set
    os.chdir(project)
    try:
        with RunServer([(name, None) for name in SCRIPTS]) as server:
            server.preload.append(PRELOADED)
            server.env["XLALINT_TRACES"] = str(traces)
            server.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(libraries), server.env.get("PYTHONPATH")]))
            return {name: _run(server, name) for name in SCRIPTS}
    finally:
        os.chdir(here)
        if no_fork is not None:
            os.environ["XLALINT_NO_FORK"] = no_fork


@forking
def test_one_server_imports_tensorflow_once_for_every_run(forked):
    first, after = forked["first.py"], forked["after.py"]
    assert _captured(first) == _captured(after) == [("step", True, "ended")]
    assert first["server"] == after["server"] != os.getpid()


@forking
def test_what_a_preloaded_library_sets_at_its_import_reaches_each_run(forked):
    assert _captured(forked["preloaded.py"]) == [("step", True, "ended")]


def test_a_variable_a_script_sets_before_importing_tensorflow_reaches_tensorflow_in_that_run_only(forked):
    """The run that set the unknown flag dies at its first op, as `python sets_flags.py` does; the run
    after it, forked from the same server, never sees the flag."""
    assert "Unknown flag in TF_XLA_FLAGS" in forked["sets_flags.py"]["error"], forked["sets_flags.py"]
    assert UNKNOWN_FLAG in forked["sets_flags.py"]["error"]
    assert _captured(forked["after.py"]) == [("step", True, "ended")]


def test_a_keras_step_that_builds_its_variables_in_its_first_call_is_traced_once(forked, traces):
    """Made in a trace, variables make TensorFlow trace the function again; the run makes the variables
    Keras builds there eagerly (``one_trace``), so the script's own step is traced once, as XLA compiles it."""
    assert _captured(forked["keras_step.py"]) == [("train_step", True, "ended")]
    assert traces.read_text() == "traced\n"


@forking
def test_without_fork_a_run_gets_a_fresh_interpreter_and_the_same_answer(forked, project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.setenv("XLALINT_NO_FORK", "1")
    fresh = run_script("first.py", None, [], budget=60, patience=2)
    assert _captured(fresh) == _captured(forked["first.py"])
    assert fresh["server"] != forked["first.py"]["server"]


HANGS = """
import os
import subprocess
import sys
import time

sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(os.environ["MARKER"] + ".part", "w") as out:  # outside the project: not refused
    out.write(f"{os.getpid()} {os.getppid()} {sleeper.pid}")
os.replace(os.environ["MARKER"] + ".part", os.environ["MARKER"])
time.sleep(600)
"""


def test_a_signal_stops_the_run_its_server_and_what_the_script_started(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "hangs.py").write_text(HANGS)
    marker = tmp_path / "pids"
    run = subprocess.Popen([sys.executable, "-m", "xlalint", "run", "--format", "json", "hangs.py"], cwd=project,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "MARKER": str(marker), "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 300
    while not marker.exists() and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
    started = [int(pid) for pid in marker.read_text().split()]  # the run, its server, the script's child
    assert len(set(started)) == 3 and all(alive(pid) for pid in started)
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 143, err
    assert json.loads(out)["interrupted"] == "SIGTERM"
    time.sleep(0.5)  # SIGKILLed orphans are reaped by init
    assert [pid for pid in started if alive(pid)] == []


def test_a_tf_function_called_only_inside_a_captured_one_is_checked_there_not_listed_as_never_called(forked, project):
    report = run_report(forked["nested.py"], str(project / "nested.py"), Options(device="cpu"))
    assert [(entry.name, entry.verdict) for entry in report.entries] == [("step", "compatible")]


def test_calls_after_a_dataset_loop_that_ended_on_its_second_element_count_towards_patience(forked):
    """The loop's second element looked for a retrace; once the loop has ended, calls that trace nothing
    new count again, and the endless loop after it is stopped by --patience."""
    assert _captured(forked["endless_after_a_loop.py"]) == [("step", True, "captured")]
