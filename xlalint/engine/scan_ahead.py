"""The source pass of a run's Python files, done ahead in a thread of the parent's own.

A file's source findings do not depend on its trace, and the parent has nothing else to do while the
tracing servers import TensorFlow (seconds, with a core to spare). A thread scans the files in the run's
order from the start; the analysis takes each file's scan when the file's traced result comes in, or
scans it then itself if the thread has not got to it. The same function gives the same findings either way.
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class ScanAhead(Generic[T]):
    """``scan(path)`` of each of ``paths``, computed once, ahead of ``take(path)`` where the thread got there first."""

    def __init__(self, paths: list[str], scan: Callable[[str], T]):
        self.scan = scan
        self.claimed: set[str] = set()  # scanned, or being scanned, by one of the two threads
        self.scanning: str | None = None  # the path the thread is scanning now
        self.ready: dict[str, tuple[T | None, BaseException | None]] = {}
        self.changed = threading.Condition()
        self.stopped = False
        threading.Thread(target=self._ahead, args=(list(paths),), daemon=True, name="xlalint-scan-ahead").start()

    def _ahead(self, paths: list[str]) -> None:
        for path in paths:
            with self.changed:
                if self.stopped:
                    return
                if path in self.claimed:
                    continue
                self.claimed.add(path)
                self.scanning = path
            try:
                done: tuple[T | None, BaseException | None] = (self.scan(path), None)
            except BaseException as error:  # noqa: BLE001 - raised where the file is taken, as without the thread
                done = (None, error)
            with self.changed:
                self.ready[path] = done
                self.scanning = None
                self.changed.notify_all()

    def take(self, path: str) -> T:
        """The scan of ``path``: the thread's, waited for if it is under way, else made here (also once stopped,
        and for a path taken before)."""
        with self.changed:
            while path == self.scanning:
                self.changed.wait()
            done = self.ready.pop(path, None)
            self.claimed.add(path)
        if done is None:
            return self.scan(path)
        value, error = done
        if error is not None:
            raise error
        return value  # type: ignore[return-value]

    def stop(self) -> None:
        """Scan nothing more ahead (the run is over, or was interrupted)."""
        with self.changed:
            self.stopped = True
