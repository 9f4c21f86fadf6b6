"""What every rule is: a code, a name, a severity and a pure function of the graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from xlalint.opgraph import OpGraph
from xlalint.support import SupportTable


@dataclass(frozen=True)
class Context:
    """What a rule may look at besides the graph."""

    support: SupportTable
    device: str
    entry: str
    signature: tuple = ()  # ({"dtype", "shape"}, ...) of the entry's arguments
    kind: str = "function"  # "function" | "tf.function" | "keras-model" | "keras-builder" | "saved-model-signature"
    keras_layers: tuple = ()  # layers Keras runs without XLA: ({"name", "class", "file", "line", "devices"}, ...)


@dataclass(frozen=True)
class Hit:
    """A rule's raw result: an op (or the entry itself when ``node`` is None)."""

    code: str
    message: str
    hint: str
    node: str | None = None
    api: str | None = None  # the call name to look for on the user's line
    site: tuple[str, int] | None = None  # (file, line) for a hit that is not an op, e.g. a layer's construction


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: str
    check: Callable[[OpGraph, Context], Iterable[Hit]] | None  # None: reported by the verify pass
