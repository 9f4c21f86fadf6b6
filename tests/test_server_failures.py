"""Servers that die, or cannot be cloned, at the worst moment: the run still answers every file.

The servers here are stand-ins (tests/stand_in_server.py): the real fork server without TensorFlow, so these
tests are fast. A server dies between a job's check that it is alive and its next request (the OOM killer
ending the origin, say); a clone cannot be made where its FIFOs cannot; an interrupt comes while the run
closes.
"""

from __future__ import annotations

import errno
import os
import signal
import threading

import pytest
from helpers import TESTS, alive, parent, wait_for

from xlalint.tracing import pool as server_pool
from xlalint.tracing import server as server_client

from xlalint.tracing import workers as worker_client
from xlalint.backend.fork_server import FORK_SAFE
from xlalint.process.result_file import aside
from xlalint.tracing.server import CloneFailed, start_server
from xlalint.tracing.workers import Tracing, run_worker

pytestmark = pytest.mark.skipif(not FORK_SAFE, reason="servers fork and are cloned only on Linux")
real_start_server = start_server


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    """Runs' servers are stand-ins; returns requests for files named as asked."""
    monkeypatch.delenv("XLALINT_NO_FORK", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    monkeypatch.setattr(server_pool, "start_server", lambda module, *args: real_start_server("stand_in_server", *args))

    def requests(*names: str) -> list:
        for name in names:
            (tmp_path / name).write_text("x = 1\n")
        return [{"path": str(tmp_path / name), "targets": [], "discover": True, "verify": None} for name in names]

    return requests


def kill_and_wait(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not alive(pid), 10)


def answers(requests: list) -> dict:
    """Each file's result, by name, from a run of two jobs."""
    return {os.path.basename(path): result for path, result in run_worker(requests, 10, jobs=2).files.items()}


def test_a_file_whose_clone_died_with_the_origin_before_it_started_is_checked_by_a_new_origin(stand_in, monkeypatch):
    check = worker_client._check
    other_done = threading.Event()
    killed: list[int] = []

    def origin_dies_first(server, workdir, request, *rest):
        if request["path"].endswith("dies.py") and not killed:  # its job saw the clone alive; then the origin dies
            assert other_done.wait(10)  # the other job is idle: only this file's clone dies with the origin
            killed.append(parent(server.pid))
            kill_and_wait(killed[0])
            kill_and_wait(server.pid)
        result = check(server, workdir, request, *rest)
        if request["path"].endswith("other.py"):
            other_done.set()
        return result

    monkeypatch.setattr(worker_client, "_check", origin_dies_first)
    files = answers(stand_in("dies.py", "other.py"))
    assert [files[name]["error"] for name in ("dies.py", "other.py")] == [None, None]
    assert files["other.py"]["origin"] == killed[0] != files["dies.py"]["origin"] != os.getpid()  # a new origin's clone


def test_a_file_whose_server_dies_again_before_it_starts_is_told_so(stand_in, monkeypatch):
    check = worker_client._check

    def clone_dies(server, workdir, request, *rest):
        if request["path"].endswith("dies.py"):
            kill_and_wait(server.pid)
        return check(server, workdir, request, *rest)

    monkeypatch.setattr(worker_client, "_check", clone_dies)
    files = answers(stand_in("dies.py", "other.py"))
    assert files["dies.py"]["error"] == "the tracing server ended before it started the file"
    assert files["other.py"]["error"] is None


def test_a_server_that_died_with_a_request_unsent_is_stopped_and_killed_quietly(stand_in, tmp_path):
    origin = real_start_server("stand_in_server", [], dict(os.environ), str(tmp_path), lambda server: None,
                               "tracing server")
    clone = origin.clone(str(tmp_path))
    kill_and_wait(origin.pid)
    kill_and_wait(clone.pid)
    request = {"path": "a.py", "result": str(tmp_path / "a.result"), "log": str(tmp_path / "a.log")}
    assert clone.start(request) is None and origin.start(request) is None  # each request left in its pipe's buffer
    clone.kill()
    origin.stop()
    assert clone.answers.closed and origin.answers.closed


def no_fifo(path, mode=0o666):
    raise OSError(errno.EPERM, "Operation not permitted", path)


def test_a_server_that_cannot_be_cloned_here_says_why_and_the_run_uses_fresh_servers(stand_in, monkeypatch,
                                                                                       tmp_path):
    monkeypatch.setattr(server_client.os, "mkfifo", no_fifo)
    origin = real_start_server("stand_in_server", [], dict(os.environ), str(tmp_path), lambda server: None,
                               "tracing server")
    try:
        with pytest.raises(CloneFailed, match=r"could not clone the tracing server: \[Errno 1\] Operation not perm"):
            origin.clone(str(tmp_path))
    finally:
        origin.kill()
    files = answers(stand_in("a.py", "b.py", "c.py"))
    assert {name: (result["error"], result["origin"]) for name, result in files.items()} == {
        name: (None, os.getpid()) for name in ("a.py", "b.py", "c.py")}  # each checked by a server started here


class InterruptedWait(threading.Event):
    """An event whose wait raises, as a SIGINT handler does while the run waits for its servers to end."""

    def wait(self, timeout=None):
        raise KeyboardInterrupt


def test_an_interrupt_while_the_run_closes_still_kills_its_servers_and_removes_its_files(stand_in):
    tracing = Tracing([], 10, None, 0, 1)  # no job: close() waits for the jobs' end until EXIT_WAIT_S
    server = real_start_server("stand_in_server", [], tracing.env, tracing.workdir, tracing.pool._keep,
                               "tracing server")
    tracing.ended = InterruptedWait()
    with pytest.raises(KeyboardInterrupt):
        tracing.close()
    assert server.answers.closed and wait_for(lambda: not alive(server.pid), 10)
    assert not os.path.exists(tracing.workdir)


def test_a_result_left_half_written_is_removed(tmp_path):
    files = {"result": str(tmp_path / "0.result"), "log": str(tmp_path / "0.log")}
    for path in [*files.values(), aside(files["result"])]:  # a child killed while it wrote its result
        open(path, "w").close()
    result = worker_client._outcome(None, {"path": "a.py"}, files, {"code": -signal.SIGKILL}, None)
    assert result["error"].startswith("the traced module was killed by SIGKILL")
    assert list(tmp_path.iterdir()) == []


def test_a_run_whose_server_died_before_it_started_it_says_so(stand_in, monkeypatch, tmp_path):
    """``xlalint run``'s server (a stand-in here) dies just before it is handed the run: the run's error says
    that, not that the run itself was killed."""
    from xlalint.run import client as run_client

    real_start = server_client.Server.start

    def dies_first(self, request):
        kill_and_wait(self.pid)
        return real_start(self, request)

    monkeypatch.setattr(server_client.Server, "start", dies_first)
    [request] = stand_in("script.py")
    with run_client.RunServer([]) as server:
        result = server.run(request["path"], None, [], 5, 2)
        assert result == {"error": "the run server ended before it started the run"}
        assert [name for name in os.listdir(server.work) if not name.startswith("server-")] == []  # its own log
