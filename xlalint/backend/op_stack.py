"""The op's stack in XLA's compile error: the frames TensorFlow lists under "The op is created at:" (or, for a
tensor list of unknown size, "Stack trace for op definition:"), outermost first.

TensorFlow writes each frame's file without the folders that all the stack's files share, its own files included:
``/`` where it is installed away from the user's files, the folder they share where a virtual environment and the
script sit in one (``/data/`` for ``/data/venv`` and ``/data/runs/train.py``), nothing when a frame is Python's
frozen ``runpy`` (``runpy.run_path``, ``python -m``). So a written file is ``path`` when it ends ``path`` at a
folder's boundary. Read by the tools that compile for real to find the user's line the compiler names (the
differential tester, the run truth of the tests), not by the check.
"""

from __future__ import annotations

import os
import re

HEADINGS = ("The op is created at:", "Stack trace for op definition:")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_END = "tf2xla conversion failed"  # what the compiler writes after the stack


def _frames(message: str) -> list[tuple[str, int]]:
    """``(file as written, line)`` of each frame of the first op stack in ``message``; [] where it has none. The
    stack ends at the compiler's own words after it, or at the first line that is neither a frame nor the code
    under one (a traceback printed later in the message is not the op's)."""
    stack = next((message.split(heading, 1)[1] for heading in HEADINGS if heading in message), "")
    frames: list[tuple[str, int]] = []
    under_frame = False
    for line in stack.split(_END, 1)[0].strip().splitlines():
        found = _FRAME.search(line)
        if found:
            frames.append((found["file"], int(found["line"])))
        elif not (under_frame and line[:1].isspace() and line.strip()):  # a frame's code is indented
            break
        under_frame = bool(found)
    return frames


def _written_for(written: str, path: str) -> bool:
    """Whether a frame's file as TensorFlow wrote it is ``path`` (absolute, as Python named the file); a frame of
    no file (``<frozen runpy>``) is none."""
    return not written.startswith("<") and (os.sep + path.lstrip(os.sep)).endswith(os.sep + written.lstrip(os.sep))


def created_at(message: str, path: str) -> int | None:
    """The line of ``path`` that the op's stack names last (the innermost); None when it names none."""
    lines = [line for file, line in _frames(message) if _written_for(file, path)]
    return lines[-1] if lines else None


def innermost_in(message: str, folder: str) -> tuple[str, int] | None:
    """``(file name, line)`` of the innermost frame of the op's stack whose file lies directly in ``folder`` (as
    Python named the folder's files); None when none does."""
    frames = [(os.path.basename(file), line) for file, line in _frames(message)
              if _written_for(file, os.path.join(folder, os.path.basename(file)))]
    return frames[-1] if frames else None
