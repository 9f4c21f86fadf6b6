"""Model forward passes that another traced entry of the file already checks.

A module-level Keras model that a training step (a ``tf.function`` with a signature, Keras' own
``MODEL.fit``...) calls is traced inside that step: tracing its forward pass again on its own
repeats the work (ResNet50: about 1,800 ops and seconds of tracing). The worker traces every other
entry first, then only the discovered models that no successful trace called. A covered model
leaves the file's entries; its record, with what it carries without a trace (the layers Keras
runs without XLA, Keras' ``jit_compile`` decisions), is kept in the covering entry's ``covers``.
"""

from __future__ import annotations

from xlalint.backend.discover import Candidate
from xlalint.core.wire import EntryRecord

FORWARD_KINDS = ("keras-model", "keras-builder")


def is_forward(candidate: Candidate, named: set[str]) -> bool:
    """A discovered Keras 3 model's forward pass; one named on the command line is always traced on its own."""
    return candidate.kind in FORWARD_KINDS and candidate.model is not None and candidate.name not in named


def trace_order(candidates: list[Candidate], named: set[str]) -> list[int]:
    """The indexes of ``candidates`` in the order to trace them: every other entry first, then the
    model forward passes, each group in discovery order."""
    forward = [is_forward(c, named) for c in candidates]
    return [i for i, f in enumerate(forward) if not f] + [i for i, f in enumerate(forward) if f]


def without_covered(entries: list[EntryRecord], covering: dict[int, int]) -> list[EntryRecord]:
    """``entries`` less the covered ones (``covering``: index of a covered entry -> index of the entry
    whose trace called its model), each kept in its covering entry's ``covers``."""
    for covered, caller in sorted(covering.items()):
        entries[caller].setdefault("covers", []).append(entries[covered])
    return [entry for index, entry in enumerate(entries) if index not in covering]
