"""Source edits that resolve findings, each labelled safe or unsafe (as ruff does).

A finding that can be fixed carries ``fix = {"kind", "safety", "description"}``;
``apply`` turns a file's requested fixes into new source in one libcst pass.
"""

from xlalint.fixes.apply import FixOutcome, apply_to_file, fix_files
from xlalint.fixes.guard import Guard

__all__ = ["FixOutcome", "Guard", "apply_to_file", "fix_files"]
