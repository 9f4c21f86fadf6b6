"""Source edits that resolve findings, each labelled safe or unsafe (as ruff does).

A finding that can be fixed carries its rule's ``FixOffer`` (kind, safety, description); the rule's
``Fix`` holds the edit, and ``apply`` makes a file's requested edits in one libcst pass (``edits``),
checks that the result parses and writes it atomically, only where ``guard`` allows.
"""

from xlalint.fixes.apply import FixOutcome, apply_to_file, fix_files
from xlalint.fixes.guard import Guard

__all__ = ["FixOutcome", "Guard", "apply_to_file", "fix_files"]
