"""What every rule is: its metadata, its check, and the one place findings are built."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from xlalint.opgraph import OpGraph
from xlalint.results import Finding
from xlalint.support import SupportTable


@dataclass(frozen=True)
class Context:
    """What a graph rule may look at besides the graph."""

    support: SupportTable
    device: str
    entry: str
    signature: tuple = ()  # ({"dtype", "shape"}, ...) of the entry's arguments
    kind: str = "function"  # "function" | "tf.function" | "keras-model" | "keras-builder" | "saved-model-signature"
    keras_layers: tuple = ()  # layers Keras runs without XLA: ({"name", "class", "file", "line", "devices"}, ...)


@dataclass(frozen=True)
class Hit:
    """A graph rule's raw result: an op (or the entry itself when ``node`` is None)."""

    code: str
    message: str
    hint: str
    node: str | None = None
    api: str | None = None  # the call name to look for on the user's line
    site: tuple[str, int] | None = None  # (file, line) for a hit that is not an op, e.g. a layer's construction
    related: tuple[tuple[str, str], ...] = ()  # (op id, what it has to do with the finding): shown at its line


@dataclass(frozen=True)
class Fix:
    """The edit ``--fix`` makes for a rule's finding (docs/fixes.md)."""

    kind: str
    safety: str  # "safe": applied by --fix; "unsafe": only with --unsafe-fixes
    description: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "safety": self.safety, "description": self.description}


# Where a rule's findings come from: the traced op graph, the source text (libcst, also --static),
# or the run itself (offers, suppressions, --verify).
STAGES = ("graph", "source", "run")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: str
    stage: str = "graph"
    check: Callable[[OpGraph, Context], Iterable[Hit]] | None = None  # graph rules only
    fix: Fix | None = None
    # source rules only: the pending findings (xlalint.static.index.Pending) of a file's libcst Index
    check_source: Callable[[Any], Iterable] | None = None

    def finding(self, message: str, hint: str, path: str, line: int, col: int = 1, entry: str = "",
                node: dict | None = None, fixable: bool = False, related: tuple[dict, ...] = ()) -> Finding:
        """This rule's finding; ``fixable`` attaches the rule's fix."""
        return Finding(self.code, self.name, self.severity, message, hint, path, line, col, entry,
                       node["type"] if node else None, node["name"] if node else None,
                       self.fix.to_json() if fixable and self.fix else None, related=related)


def layer_names(names: set[str]) -> str:
    """"layer `a`", or "layers `a` and `b`" for the layers built on one line (a Bidirectional's two)."""
    quoted = [f"`{name}`" for name in sorted(names)]
    return f"layer {quoted[0]}" if len(quoted) == 1 else f"layers {', '.join(quoted[:-1])} and {quoted[-1]}"


def value_origin(value) -> tuple[tuple[str, str], ...]:
    """The related place of a shape value's verdict: the op it comes from (a random op, a loop, a variable)."""
    if value.origin is None:
        return ()
    reason = re.sub(r" \(line \d+\)", "", value.reason)  # the related place is that line
    return ((value.origin["id"], f"the value comes from {reason}"),)
