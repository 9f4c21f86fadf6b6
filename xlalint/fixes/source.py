"""A file's bytes as text to edit, and the edited text back as bytes in the file's own form.

The edits (libcst, which cannot parse mixed line endings, and the text edits) see one ``\\n``
per line. Around them the file keeps its encoding (a PEP 263 declaration, a UTF-8 BOM) and
each line its ending (``\\r\\n``, ``\\n``, ``\\r``; mixed stays mixed): unchanged lines are
written back as they were read, new or changed lines take the ending of the line they replace.
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize
from dataclasses import dataclass

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|\Z)")  # Python's own line breaks (form feeds are not)


@dataclass(frozen=True)
class Source:
    encoding: str  # as tokenize names it: "utf-8-sig" when the file starts with a BOM
    bodies: list[str]  # the lines without their endings
    endings: list[str]  # "\r\n", "\n", "\r", or "" for a last line without one

    @classmethod
    def decode(cls, data: bytes) -> Source:
        """Raises SyntaxError (a bad encoding declaration) or UnicodeDecodeError."""
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        pairs = [m.groups() for m in _LINE.finditer(text) if m.group(0)]
        return cls(encoding, [body for body, _ in pairs], [end for _, end in pairs])

    @property
    def text(self) -> str:
        return "".join(body + ("\n" if end else "") for body, end in zip(self.bodies, self.endings))

    def encode(self, text: str) -> bytes:
        """``text`` (an edit of ``self.text``) with this file's line endings and encoding."""
        new = text.split("\n")
        ends = ["\n"] * (len(new) - 1) + [""]
        if new[-1] == "":
            new.pop(), ends.pop()
        default = next((end for end in self.endings if end), "\n")
        out = []
        for i1, i2, j1, j2 in changed_blocks(self.bodies, new):
            for k in range(j2 - j1):
                old = i1 + min(k, i2 - i1 - 1) if i2 > i1 else i1 - 1
                end = self.endings[old] if old >= 0 and self.endings[old] else default
                out.append(new[j1 + k] + (end if ends[j1 + k] else ""))
        return "".join(out).encode(self.encoding)


def changed_blocks(old: list[str], new: list[str]):
    """``(i1, i2, j1, j2)``: old[i1:i2] became new[j1:j2]. The common head and tail are matched
    first, so a single edit is placed exactly even among repeated lines (blank ones, say)."""
    limit = min(len(old), len(new))
    head = next((n for n in range(limit) if old[n] != new[n]), limit)
    tail = next((n for n in range(limit - head) if old[-1 - n] != new[-1 - n]), limit - head)
    yield 0, head, 0, head
    middle = difflib.SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    for _, i1, i2, j1, j2 in middle.get_opcodes():
        yield head + i1, head + i2, head + j1, head + j2
    yield len(old) - tail, len(old), len(new) - tail, len(new)


def _lines(data: bytes) -> list[bytes]:
    """Split after each ``\\n`` only, as patch and git apply do (a ``\\r`` stays in its line)."""
    return re.findall(rb"[^\n]*\n|[^\n]+\Z", data)


def unified_diff(path: str, old: bytes, new: bytes) -> bytes:
    """A unified diff of the raw bytes: every line keeps its own ending, so ``patch`` reproduces ``new``."""
    name = path.encode("utf-8", "surrogateescape")
    out = []
    for line in difflib.diff_bytes(difflib.unified_diff, _lines(old), _lines(new), b"a/" + name, b"b/" + name):
        out.append(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n")
    return b"".join(out)
