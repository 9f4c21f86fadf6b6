"""Say why tracing an entry failed: the exception's own message, the user's line, what to try."""

from __future__ import annotations

import re

from xlalint.backend.frames import is_user_file
from xlalint.inputs.files import display_path
from xlalint.core.specs import Spec

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_RAISED = re.compile(r"^[A-Za-z_][\w.]*: ")  # "ValueError: ", as TensorFlow repeats it after its frames
MAX_MESSAGE = 600  # characters of the exception's message kept in a report line


def message_and_site(error: BaseException) -> tuple[str, str | None]:
    """The exception's own message on one line, and the innermost user ``file:line`` TensorFlow names.

    An error raised while tracing reads "in user code:", a list of frames, a blank line, then the
    original message; Keras adds the arguments it received, which the signature already says.
    """
    lines = _ANSI.sub("", str(error)).splitlines()
    site = None
    if lines and lines[0].strip() == "in user code:":
        frames = [(index, match) for index, match in enumerate(map(_FRAME.match, lines)) if match]
        user = [match for _, match in frames if is_user_file(match["file"])]
        if user:
            site = f"{display_path(user[-1]['file'])}:{user[-1]['line']}"
        if frames:
            rest = lines[frames[-1][0] + 1:]
            blank = next((i for i, text in enumerate(rest) if not text.strip()), len(rest))
            lines = rest[blank:]
            while lines and not lines[0].strip():
                lines.pop(0)
            if lines:
                lines[0] = _RAISED.sub("", lines[0].strip(), count=1)
    kept = []
    for text in lines:
        if text.strip().startswith("Arguments received by"):
            break
        kept.append(text.strip())
    message = " ".join(" ".join(kept).split())
    return (message[:MAX_MESSAGE - 3] + "..." if len(message) > MAX_MESSAGE else message), site


def tracing_failure(name: str, signature: list[dict], error: BaseException) -> str:
    """The report line for entry ``name`` whose trace on ``signature`` raised ``error``."""
    message, site = message_and_site(error)
    specs = ", ".join(s["dtype"] if s["shape"] is None else str(Spec(s["dtype"], tuple(s["shape"])))
                      for s in signature)
    return (f"tracing failed: {type(error).__name__}: {message}" + (f" (at {site})" if site else "")
            + f"; hint: call `{name}` on inputs of these specs ({specs}) to reproduce it, or name it "
            f"with other specs: `xlalint FILE::{name} --spec ...` (one per input)")
