"""With several jobs, TensorFlow is imported once: the servers that check files are clones forked from the first.

One real run of four files with two jobs (``run_worker``, as the command line runs it): every
interpreter the run starts notes its pid (a ``sitecustomize`` on the servers' path), and every file
notes the server that checks it and that server's parent. ``stops.py`` stops its own server and
hangs: it times out, its server says nothing of its end and is replaced. Meanwhile the other job
checks ``a.py`` and ``b.py``, each of which takes a while (under the timeout), so ``c.py`` is left to
the replaced server's job, which then ends while ``b.py`` still runs: the thread that started the
origin may end before the others (a process dies with the thread that started it).
"""

from __future__ import annotations

import os

import pytest
from helpers import alive

from xlalint.tracing import server as server_client

from xlalint.tracing import workers as worker_client
from xlalint.backend.fork_server import FORK_SAFE
from xlalint.tracing.workers import run_worker

pytestmark = pytest.mark.tf  # the servers import TensorFlow

TIMEOUT_S = 10.0
STARTS = """import os, sys
if sys.argv[:1] == ["-c"]:  # an xlalint server's interpreter
    with open(os.environ["SERVER_STARTS"], "a") as out:
        out.write(f"{os.getpid()}\\n")
"""
NOTES_SERVER = """import os
import time

import tensorflow as tf

server = os.getppid()
with open(f"/proc/{server}/stat") as stat:
    origin = stat.read().rsplit(")", 1)[1].split()[1]
with open(os.path.join(os.environ["SEEN"], __name__), "w") as out:
    out.write(f"{server} {origin}")
time.sleep(TAKES_S)


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def f(x):
    return x + 1.0
"""
STOPS_SERVER = """import os
import signal
import time

import tensorflow as tf

with open(os.path.join(os.environ["SEEN"], __name__), "w") as out:
    out.write(str(os.getppid()))
os.kill(os.getppid(), signal.SIGSTOP)  # it can no longer say that this child ended
time.sleep(600)
"""
# stops.py holds one job for TIMEOUT_S; the other takes a.py, then b.py (each of them, with its import and
# trace, well under TIMEOUT_S; both together well over it), so c.py goes to the replaced server.
TAKES_S = 0.6 * TIMEOUT_S
FILES = {"stops.py": STOPS_SERVER, "a.py": NOTES_SERVER.replace("TAKES_S", str(TAKES_S)),
         "b.py": NOTES_SERVER.replace("TAKES_S", str(TAKES_S)), "c.py": NOTES_SERVER.replace("TAKES_S", "0")}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The files' results, the interpreters started, and what each file saw (name -> pids)."""
    if not FORK_SAFE:
        pytest.skip("servers are cloned only where they fork (Linux)")
    root = tmp_path_factory.mktemp("clones")
    (root / "site").mkdir()
    (root / "site" / "sitecustomize.py").write_text(STARTS)
    seen_dir = tmp_path_factory.mktemp("seen")  # outside the files' folder, where the guard lets them write
    for name, text in FILES.items():
        (root / name).write_text(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("XLALINT_NO_FORK", raising=False)
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(root / "site"), os.environ.get("PYTHONPATH")])))
        patch.setenv("SERVER_STARTS", str(root / "starts"))
        patch.setenv("SEEN", str(seen_dir))
        patch.setattr(server_client, "EXIT_WAIT_S", 0.2)  # how long a stopped server is given to say the end
        patch.setattr(worker_client, "EXIT_WAIT_S", 0.2)
        requests = [{"path": str(root / name), "targets": [], "discover": True, "verify": None} for name in FILES]
        result = run_worker(requests, TIMEOUT_S, jobs=2)  # type: ignore[arg-type]
    seen = {path.name: [int(pid) for pid in path.read_text().split()] for path in seen_dir.iterdir()}
    starts = [int(pid) for pid in (root / "starts").read_text().split()]
    return {os.path.basename(path): answer for path, answer in result.files.items()}, starts, seen


def test_tensorflow_is_imported_once_and_clones_of_that_server_check_the_files(run):
    _, starts, seen = run
    assert len(starts) == 1  # one interpreter: the origin, which checks no file itself
    assert seen["a"][0] == seen["b"][0] != seen["stops"][0]  # a job's clone serves file after file
    assert starts[0] not in {seen[name][0] for name in seen}
    assert {seen[name][1] for name in "abc"} == set(starts)  # each forked by the origin


def test_a_server_replaced_after_a_timeout_still_works(run):
    files, _, seen = run
    assert f"timed out after {TIMEOUT_S:g}s" in files["stops.py"]["error"]
    assert seen["c"][0] not in (seen["stops"][0], seen["a"][0])  # the clone that replaced stops.py's server
    for name in ("a.py", "b.py", "c.py"):
        assert files[name]["error"] is None and [e["name"] for e in files[name]["entries"]] == ["f"], name
        assert files[name]["entries"][0]["graph"] is not None, name


def test_nothing_the_run_started_is_left_running(run):
    _, starts, seen = run
    pids = set(starts) | {pid for pids in seen.values() for pid in pids}
    assert [pid for pid in pids if alive(pid)] == []
