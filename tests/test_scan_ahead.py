"""The source pass done ahead in a thread (engine/scan_ahead.py): each file scanned once, by whichever thread
gets there first, with the same answer and the same exception as a scan made where the file is taken."""

import sys
import threading

import pytest

from xlalint.engine.scan_ahead import ScanAhead
from xlalint.inputs.files import PYTHON_RECURSION_LIMIT, parse_python


# A safety net only, for a thread that never gets there: each wait ends on the thread's own signal.
PATIENCE = 600


def _wait_until_ready(ahead: ScanAhead, paths: list[str]) -> None:
    """Until the thread has put each of ``paths`` in ``ready`` (it notifies its condition on each)."""
    with ahead.changed:
        assert ahead.changed.wait_for(lambda: all(path in ahead.ready for path in paths), PATIENCE)


def _holding(entered: threading.Event, release: threading.Event) -> None:
    """Inside a scan: say it has begun, then hold it until the test releases it."""
    entered.set()
    assert release.wait(PATIENCE)


def test_the_threads_scans_are_taken_and_no_file_is_scanned_twice():
    calls: list[str] = []
    ahead = ScanAhead(["a.py", "b.py"], lambda path: calls.append(path) or path.upper())
    _wait_until_ready(ahead, ["a.py", "b.py"])
    assert [ahead.take("b.py"), ahead.take("a.py")] == ["B.PY", "A.PY"] and calls == ["a.py", "b.py"]


def test_a_file_the_thread_has_not_reached_is_scanned_where_it_is_taken_and_one_under_way_is_waited_for():
    calls: list[tuple[str, str]] = []
    entered, release = threading.Event(), threading.Event()

    def scan(path: str) -> str:
        calls.append((path, threading.current_thread().name))
        if path == "a.py":
            _holding(entered, release)
        return path.upper()

    ahead = ScanAhead(["a.py", "b.py"], scan)
    assert entered.wait(PATIENCE)  # the thread holds a.py
    assert ahead.take("b.py") == "B.PY"  # taken before the thread got there: scanned here
    release.set()
    assert ahead.take("a.py") == "A.PY"
    ahead.stop()
    here = threading.current_thread().name
    assert sorted(calls) == [("a.py", "xlalint-scan-ahead"), ("b.py", here)]


def test_a_scan_that_raises_raises_where_the_file_is_taken():
    def scan(path: str) -> str:
        raise ValueError(f"broken rule on {path}")

    ahead = ScanAhead(["a.py"], scan)
    _wait_until_ready(ahead, ["a.py"])
    with pytest.raises(ValueError, match="broken rule on a.py"):
        ahead.take("a.py")


def test_once_stopped_nothing_more_is_scanned_ahead():
    calls: list[tuple[str, str]] = []
    entered, release = threading.Event(), threading.Event()

    def scan(path: str) -> str:
        calls.append((path, threading.current_thread().name))
        if path == "a.py":
            _holding(entered, release)
        return path

    ahead = ScanAhead(["a.py", "b.py"], scan)
    assert entered.wait(PATIENCE)  # the thread holds a.py
    ahead.stop()
    release.set()
    assert ahead.take("b.py") == "b.py" and ahead.take("a.py") == "a.py"
    here = threading.current_thread().name
    assert sorted(calls) == [("a.py", "xlalint-scan-ahead"), ("b.py", here)]


def test_a_path_taken_twice_is_scanned_again_rather_than_waited_for():
    calls: list[str] = []
    ahead = ScanAhead(["a.py"], lambda path: calls.append(path) or path)
    _wait_until_ready(ahead, ["a.py"])
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
