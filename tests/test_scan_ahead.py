"""The source pass done ahead in a thread (engine/scan_ahead.py): each file scanned once, by whichever thread
gets there first, with the same answer and the same exception as a scan made where the file is taken."""

import sys
import threading

import pytest

from xlalint.engine.scan_ahead import ScanAhead
from xlalint.inputs.files import PYTHON_RECURSION_LIMIT, parse_python


def _wait_for(condition) -> None:
    event = threading.Event()
    for _ in range(500):
        if condition():
            return
        event.wait(0.01)
    raise AssertionError("the thread did not get there")


def test_the_threads_scans_are_taken_and_no_file_is_scanned_twice():
    calls: list[str] = []
    ahead = ScanAhead(["a.py", "b.py"], lambda path: calls.append(path) or path.upper())
    _wait_for(lambda: len(ahead.ready) == 2)
    assert [ahead.take("b.py"), ahead.take("a.py")] == ["B.PY", "A.PY"] and calls == ["a.py", "b.py"]


def test_a_file_the_thread_has_not_reached_is_scanned_where_it_is_taken_and_one_under_way_is_waited_for():
    calls: list[str] = []
    release = threading.Event()

    def scan(path: str) -> str:
        calls.append(path)
        if path == "a.py":
            release.wait(5)
        return path.upper()

    ahead = ScanAhead(["a.py", "b.py"], scan)
    _wait_for(lambda: calls == ["a.py"])  # the thread holds a.py
    assert ahead.take("b.py") == "B.PY"  # taken before the thread got there: scanned here
    release.set()
    assert ahead.take("a.py") == "A.PY"
    ahead.stop()
    assert sorted(calls) == ["a.py", "b.py"]


def test_a_scan_that_raises_raises_where_the_file_is_taken():
    def scan(path: str) -> str:
        raise ValueError(f"broken rule on {path}")

    ahead = ScanAhead(["a.py"], scan)
    _wait_for(lambda: "a.py" in ahead.ready)
    with pytest.raises(ValueError, match="broken rule on a.py"):
        ahead.take("a.py")


def test_once_stopped_nothing_more_is_scanned_ahead():
    calls: list[str] = []
    release = threading.Event()

    def scan(path: str) -> str:
        calls.append(path)
        release.wait(5)
        return path

    ahead = ScanAhead(["a.py", "b.py"], scan)
    _wait_for(lambda: calls == ["a.py"])
    ahead.stop()
    release.set()
    assert ahead.take("b.py") == "b.py" and ahead.take("a.py") == "a.py" and sorted(calls) == ["a.py", "b.py"]


def test_a_path_taken_twice_is_scanned_again_rather_than_waited_for():
    calls: list[str] = []
    ahead = ScanAhead(["a.py"], lambda path: calls.append(path) or path)
    _wait_for(lambda: "a.py" in ahead.ready)
    assert [ahead.take("a.py"), ahead.take("a.py")] == ["a.py", "a.py"] and calls == ["a.py", "a.py"]


def test_parses_in_two_threads_leave_the_processs_recursion_limit_as_it_was():
    """A parse sets the limit of a fresh interpreter, the process's, and puts it back: the thread's parses and the
    analysis' must not put back each other's (TensorFlow, imported in the same process, raised it)."""
    raised = PYTHON_RECURSION_LIMIT * 3
    interval, limit = sys.getswitchinterval(), sys.getrecursionlimit()
    sys.setswitchinterval(1e-6)  # switch threads between any two bytecodes
    sys.setrecursionlimit(raised)
    try:
        threads = [threading.Thread(target=lambda: [parse_python("x = 1\n" * 50) for _ in range(300)])
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sys.getrecursionlimit() == raised
    finally:
        sys.setswitchinterval(interval)
        sys.setrecursionlimit(limit)
