"""The editor's warm tracing server (``xlalint.tracing.warm``) stops a trace without waiting for it: ``close`` kills
the check under way before it ends the server, and a cancel reaches the child of the server that replaced a dead
one for the file's import again with real values.

The servers are stand-ins (tests/stand_in_server.py): the real fork server without TensorFlow, whose children run
the checked file as a script; the files here hang until killed.
"""

from __future__ import annotations

import os
import threading

import pytest
from helpers import TESTS, alive, wait_for

from xlalint.backend.fork_server import FORK_SAFE
from xlalint.tracing import warm as warm_module
from xlalint.tracing.server import start_server
from xlalint.tracing.warm import CANCELLED, WarmRun, WarmServer

pytestmark = pytest.mark.skipif(not FORK_SAFE, reason="Linux: processes are read from /proc")
real_start_server = start_server
HANG_S = 300  # the checks' budget, which a stopped check must not wait for
STOPPED_WITHIN_S = 60  # a guard, far below HANG_S
HANGS = '''import os
import time

if {when}:
    with open({marker!r}, "w") as note:
        note.write(str(os.getpid()))
    time.sleep({hang_s})
RESULT = {{"error": "the assert on step's answer failed", "zeros_from": "step"}}  # the zeros broke the import
'''


@pytest.fixture
def warm(monkeypatch):
    """A warm server whose servers are stand-ins."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    monkeypatch.setattr(warm_module, "start_server", lambda module, *args: real_start_server("stand_in_server", *args))
    server = WarmServer()
    yield server
    server.close()


def hanging_run(warm: WarmServer, tmp_path, when: str) -> tuple[WarmRun, list, int]:
    """A run of a file that hangs ``when`` (a condition on its ``REQUEST``), checked in a thread: the run, the
    list its answers go to, and the pid of the hanging process, once it hangs."""
    path = tmp_path / "hangs.py"
    path.write_text(HANGS.format(when=when, marker=str(tmp_path / "pid"), hang_s=HANG_S))
    run = warm.start([{"path": str(path), "targets": [], "discover": True, "verify": None}], HANG_S)
    answers: list = []
    threading.Thread(target=lambda: answers.extend(run.answers()), daemon=True).start()
    assert wait_for(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text(), STOPPED_WITHIN_S)
    return run, answers, int((tmp_path / "pid").read_text())


def test_close_kills_the_check_under_way_instead_of_waiting_for_it(warm, tmp_path, monkeypatch):
    monkeypatch.delenv("XLALINT_NO_FORK", raising=False)
    _, answers, child = hanging_run(warm, tmp_path, "True")
    server = warm.server
    assert server is not None
    closing = threading.Thread(target=warm.close, daemon=True)
    closing.start()
    closing.join(STOPPED_WITHIN_S)
    assert not closing.is_alive()
    assert wait_for(lambda: answers, STOPPED_WITHIN_S)
    assert answers[0][1]["error"] == CANCELLED
    assert wait_for(lambda: not alive(child) and not alive(server.pid), STOPPED_WITHIN_S)


def test_a_cancel_kills_the_import_again_on_the_server_that_replaced_a_dead_one(warm, tmp_path, monkeypatch):
    """A server that does not fork ends with its one request: the file's import again with real values
    (``first_step``) runs on a new server, where the cancel must find it."""
    monkeypatch.setenv("XLALINT_NO_FORK", "1")
    run, answers, again = hanging_run(warm, tmp_path, "REQUEST.get('first_step')")
    run.cancel()
    assert wait_for(lambda: answers, STOPPED_WITHIN_S)
    assert answers[0][1]["error"] == CANCELLED
    assert wait_for(lambda: not alive(again), STOPPED_WITHIN_S)
