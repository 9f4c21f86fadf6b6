"""Progress on stderr while files are traced: a status line on a terminal, plain lines in CI logs."""

from __future__ import annotations

import threading
import time

from xlalint.inputs.files import display_path


class TerminalProgress:
    """One status line, rewritten as each file starts and cleared at the end."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, path: str) -> None:
        self.stream.write(f"\rxlalint: tracing {display_path(path)}\033[K")
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r\033[K")
        self.stream.flush()


class LogProgress:
    """One line per traced file once it is done, ``[3/16] model.py 12.4 s``, for logs that are no terminal.

    Each tracing thread checks one file at a time, so a file is done when its thread starts the next
    one, or when the tracing ends (``done``)."""

    def __init__(self, stream):
        self.stream = stream
        self.total = self.count = 0
        self.running: dict[int, tuple[str, float]] = {}  # thread -> (path, start)
        self.lock = threading.Lock()

    def expect(self, total: int) -> None:
        self.total, self.count = total, 0

    def __call__(self, path: str) -> None:
        with self.lock:
            self._finish(threading.get_ident())
            self.running[threading.get_ident()] = (path, time.monotonic())

    def done(self) -> None:
        with self.lock:
            for thread in list(self.running):
                self._finish(thread)

    def clear(self) -> None:
        """Nothing to erase in a log."""

    def _finish(self, thread: int) -> None:
        if thread in self.running:
            path, start = self.running.pop(thread)
            self.count += 1
            self.stream.write(f"[{self.count}/{self.total}] {display_path(path)} {time.monotonic() - start:.1f} s\n")
            self.stream.flush()


def progress_for(stream, quiet: bool):
    """The progress reporter for ``stream`` (stderr), or None with ``-q``."""
    if quiet:
        return None
    return TerminalProgress(stream) if stream.isatty() else LogProgress(stream)
