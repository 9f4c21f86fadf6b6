"""``# expect: CODE[, CODE]`` marks in example files: where xlalint must report (no TensorFlow here)."""

from __future__ import annotations

import re
from pathlib import Path

EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def expected(path: Path) -> set[tuple[str, int]]:
    """``{(code, line)}`` from the file's marks."""
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = EXPECT.search(line)
        if match:
            found |= {(code.strip(), number) for code in match.group(1).split(",") if code.strip()}
    return found
