"""Each file is analysed as its result comes in, while the next files trace; files that end in any
order give the same report.

Real runs of the command line: ``b.py`` waits at import until what it names exists, and writes
down what it saw. ``a.py``'s saved graph (``--save-graphs``) is written by the parent's analysis
of ``a.py``, so ``b.py`` seeing it proves the analysis ran while ``b.py`` was still being traced.
With ``--jobs 2`` it also waits for ``d.py`` to start, which the other server does only once
``c.py`` is done: ``c.py`` ends before ``b.py``, out of the run's order. And since the servers
start before the parent's own imports, an interrupt may come while one still starts: it dies too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from helpers import alive, repo_env, run_xlalint, wait_for

pytestmark = pytest.mark.tf

BLOCKER = """import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def {name}(x):
    return tf.numpy_function(lambda v: v, [x], tf.float32)
"""
WAITS = """import os
import time

import tensorflow as tf


def _appears(path):
    deadline = time.monotonic() + 60  # far longer than either run needs: only a broken pipeline waits it out
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return os.path.exists(path)


with open(os.path.join(os.environ["OUT"], "b_saw.txt"), "w") as out:  # outside the project: the guard allows it
    out.write(",".join(p for p in os.environ["WAIT_FOR"].split(",") if _appears(p)))


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def g(x):
    return tf.sin(x)
"""
FILES = {"a.py": BLOCKER.format(name="f"), "b.py": WAITS, "c.py": BLOCKER.format(name="h"),
         "d.py": "import os\n\nimport tensorflow as tf\n\nopen(os.path.join(os.environ['OUT'], 'd_started'), 'w').close()\n"
                 "raise RuntimeError('d.py stops here')\n"}
# in the tracing server only (started as `python -c`): note its pid, then take long to start
SLOW_SERVER = """import os, sys, time
if sys.argv[:1] == ["-c"]:
    with open(os.environ["SERVER_PID"], "w") as out:
        out.write(str(os.getpid()))
    time.sleep(120)
"""
GRAPH = "graphs/a.f.json"  # a.py's entry f, as the analysis saves it


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same four files checked with --jobs 1 and with --jobs 2: (stdout bytes, exit code, what b.py saw)."""
    out = {}
    for jobs in ("1", "2"):
        root, seen = tmp_path_factory.mktemp(f"jobs{jobs}"), tmp_path_factory.mktemp(f"seen{jobs}")  # seen: outside it
        for name, text in FILES.items():
            (root / name).write_text(text)
        wait = [root / GRAPH] + ([seen / "d_started"] if jobs == "2" else [])
        done = run_xlalint(*FILES, "--jobs", jobs, "--no-cache", "--device", "cpu", "--format", "json",
                           "--save-graphs", "graphs", cwd=root, env={"WAIT_FOR": ",".join(map(str, wait)),
                                                                     "OUT": str(seen)}, text=False)
        saw = (seen / "b_saw.txt").read_text().split(",")
        out[jobs] = (done.stdout, done.returncode, [os.path.relpath(p, root) if p.startswith(str(root)) else
                                                    os.path.basename(p) for p in saw])
    return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_is_analysed_while_the_next_file_is_traced(runs, jobs):
    assert GRAPH in runs[jobs][2]


def test_files_ending_out_of_order_give_the_report_of_files_ending_in_order(runs):
    assert "d_started" in runs["2"][2]  # c.py ended while b.py was still importing
    assert runs["2"][:2] == runs["1"][:2]
    report = runs["1"][0].decode()
    assert report.index('"a.py"') < report.index('"b.py"') < report.index('"c.py"')
    assert '"d.py"' in report and "d.py stops here" in report and runs["1"][1] == 1


def test_a_signal_while_the_server_starts_stops_it(tmp_path):
    """The server starts before the parent's imports: an interrupt during its start kills it too."""
    (tmp_path / "a.py").write_text(BLOCKER.format(name="f"))
    (tmp_path / "slow" / "sitecustomize.py").parent.mkdir()
    (tmp_path / "slow" / "sitecustomize.py").write_text(SLOW_SERVER)
    marker = tmp_path / "server.pid"
    run = subprocess.Popen([sys.executable, "-m", "xlalint", "a.py", "--no-cache", "--format", "json"], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=repo_env({"PYTHONPATH": str(tmp_path / "slow"), "SERVER_PID": str(marker)}))
    try:
        started = wait_for(lambda: marker.exists() or run.poll() is not None, 60) and marker.exists()
        assert started, f"no server started with the slow sitecustomize: {run.poll()=}"
        server = int(marker.read_text())  # written at once, then the server sleeps where TensorFlow would import
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 143 and "run cut short by SIGTERM" in err, err
    stopped = wait_for(lambda: not alive(server), 10)  # a killed orphan is reaped by init
    if not stopped:
        os.kill(server, signal.SIGKILL)
    assert stopped, "the server that was still starting outlived the run"
