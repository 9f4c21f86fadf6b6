"""How xlalint's children end: killed with all they started, and what their end says.

The tracing server's children and ``xlalint run``'s child each lead a process group; their output
goes to a log whose last meaningful line is the message of a child that died.
"""

from __future__ import annotations

import os
import signal

LOG_TAIL_BYTES = 64 << 10  # how much of a child's output is read back for its error message


def kill_group(pid: int | None) -> None:
    """Kill a child and everything it started (it leads its own process group)."""
    if pid:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _is_tensorflow_log(line: str) -> bool:
    """TensorFlow's own info/warning lines (absl format), which say nothing about the user's file."""
    return line.startswith(("WARNING: All log messages before absl", "I0000", "W0000")) or (
        len(line) > 5 and line[0] in "IW" and line[1:5].isdigit() and line[5] == " ")


def _tail(path: str) -> str:
    """The last meaningful line a child printed, reading at most LOG_TAIL_BYTES of it."""
    try:
        with open(path, "rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - LOG_TAIL_BYTES))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _is_tensorflow_log(line)]
    return lines[-1][:300] if lines else ""


def death(code: int, log: str, what: str = "the traced module") -> str:
    """How a child ended, with the last meaningful line of its log."""
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
    tail = _tail(log)
    return f"{what} {how}" + (f": {tail}" if tail else "")
