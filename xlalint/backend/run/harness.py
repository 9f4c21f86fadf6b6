"""The one harness for user code that xlalint runs: ``xlalint run``'s script, and each file's import in the
check command.

Installed once in the child that runs the code: each compiled function is captured at its first call and
answered without being compiled (``Capture``: nothing trains), Keras ``fit``/``evaluate``/``predict``
likewise (``keras_steps``), writes land in the scratch mirror or are refused and the network stops the
code (``Guard``), and a budget (``SIGALRM``) ends it with ``RunStop``.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator

from xlalint.backend.frames import innermost_user_frame
from xlalint.backend.run import keras_steps
from xlalint.backend.run.capture import Capture
from xlalint.backend.run.guard import Guard, RunStop


def frame_site(frame) -> list | None:
    """``[file, line, function]`` of the innermost user frame from ``frame`` outwards."""
    frame = innermost_user_frame(frame)
    return None if frame is None else [os.path.realpath(frame.f_code.co_filename), frame.f_lineno, frame.f_code.co_name]


class Harness:
    """The capture and the guard of one child, installed together."""

    def __init__(self, recorder, scratch: str, protected: list[str], allowed: list[str], patience: int,
                 first_step: bool = False, saved: Callable[[], None] = lambda: None):
        self.capture = Capture(recorder, saved, patience, first_step)
        self.guard = Guard(scratch, protected, allowed)

    def install(self) -> None:
        self.capture.install()
        keras_steps.install(self.capture)
        self.guard.install()

    @contextlib.contextmanager
    def budget(self, seconds: float | None, reason: str) -> Iterator[None]:
        """Raise ``RunStop(reason, site, "budget")`` in the code running inside after ``seconds`` (None: never)."""
        if seconds is None:
            yield
            return

        def out_of_time(signum, frame):
            raise RunStop(reason, frame_site(frame), "budget")

        signal.signal(signal.SIGALRM, out_of_time)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
