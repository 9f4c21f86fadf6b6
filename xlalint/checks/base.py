"""What every rule is: its metadata, its hooks (one per stage), its fix, and the one place findings are built.

A rule module defines ``RULE = Rule(...)`` with the hook of its ``stage`` (docs/architecture.md):

* ``check(graph, ctx)`` (stage "graph"): ``Hit``s on one traced entry's ``OpGraph``;
* ``check_source(index, ctx)`` (stage "source"): ``Pending`` findings from a Python file's libcst
  ``xlalint.source.index.Index``; a graph rule may give one too, its by-API-name stand-in under --static;
* ``check_text(path, text)``: findings in a shell script or Dockerfile (any stage);
* ``check_entry(entry)`` (stage "entry"): findings from one traced entry and every graph rule's
  findings on it (offers, --verify disagreements);
* ``check_selected(ctx)`` (stage "selected"): findings once every other finding of the run is
  selected (the suppression comments that suppressed nothing);
* ``check_captured(ctx)`` (stage "captured"): ``xlalint run`` only, findings from what the run saw of
  each captured function (retraces, partial batches...), made before selection like a graph rule's,
  so that comments and ``per-file-ignores`` apply to them.

Hooks see every finding, never a filtered list: selection, per-file ignores and suppression
comments apply once, at the end of the run (``xlalint.engine.selection``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from xlalint.inputs.files import display_path
from xlalint.core.opgraph import OpGraph
from xlalint.core.results import Finding, FixOffer
from xlalint.core.support import SupportTable
from xlalint.core.wire import CapturedRecord, EntryRecord


@dataclass(frozen=True)
class Context:
    """What a graph rule may look at besides the graph."""

    support: SupportTable
    device: str
    entry: str
    signature: tuple = ()  # ({"dtype", "shape"}, ...) of the entry's arguments
    kind: str = "function"  # "function" | "tf.function" | "keras-model" | "keras-builder" | "keras-fit" | "model-wrapper"...
    keras_layers: tuple = ()  # layers Keras runs without XLA: ({"name", "class", "file", "line", "devices"}, ...)
    mode: str = "jit"  # "autocluster": TensorFlow's auto-clustering decides what compiles
    keras: dict | None = None  # a compiled Keras model's decision on this device (xlalint.engine.keras_decision)


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
    fixable: bool = False  # the rule's fix applies here (offered only at a line of a Python file)


@dataclass(frozen=True)
class SourceContext:
    """What a source rule may look at besides the file's index."""

    device: str
    table: dict  # the shipped API table (xlalint.source.api_table)


@dataclass(frozen=True)
class Pending:
    """A source rule's finding, placed with all the others at the end of the pass."""

    rule: Rule
    message: str
    hint: str
    node: Any  # the libcst node it is reported at: its leftmost name's line and column
    entry: str
    op_type: str | None = None


@dataclass(frozen=True)
class EntryContext:
    """What an entry rule sees: one traced entry and every graph rule's findings on it, unfiltered."""

    record: EntryRecord  # name, line, kind, jit_compile, verify...
    graph: OpGraph
    path: str  # the file the entry was found in, as read
    findings: tuple[Finding, ...]
    jit_compile: bool | None = None  # it runs under jit_compile on the target device (a Keras model: Keras decides)

    @property
    def blocked(self) -> bool:
        return any(f.severity == "error" for f in self.findings)


@dataclass(frozen=True)
class SelectedContext:
    """What a selection rule sees once every other finding of the run is selected."""

    files: tuple[str, ...]  # the Python files whose check ran to the end
    suppressions: Any  # xlalint.source.suppressions.SuppressionIndex, each comment's use known
    select: tuple[str, ...]  # the codes the run reports


@dataclass(frozen=True)
class CapturedContext:
    """What a captured rule sees: each function ``xlalint run`` captured, as the run saw it."""

    captured: tuple[CapturedRecord, ...]


@dataclass(frozen=True)
class NodeEdit:
    """A fix's edit of a Python file: nodes of one libcst type at the finding's line, changed one by one.

    ``change(node, ancestors)`` returns the new node, or None where there is nothing to change
    (``ancestors``: the original nodes around it, outermost first); ``anchor`` gives the part of the
    node whose first line must be the finding's (a ``def``'s name, not its decorators)."""

    node_type: type
    change: Callable[[Any, tuple], Any]
    anchor: Callable[[Any], Any] = lambda node: node


@dataclass(frozen=True)
class Fix:
    """The edit ``--fix`` makes for a rule's finding (docs/fixes.md); ``xlalint.fixes`` applies it safely."""

    kind: str
    safety: str  # "safe": applied by --fix; "unsafe": only with --unsafe-fixes
    description: str
    node_edit: NodeEdit | None = None  # in Python files
    line_edit: Callable[[str], str | None] | None = None  # in other text files: the new line, or None

    def offer(self) -> FixOffer:
        return FixOffer(self.kind, self.safety, self.description)


BY_API_NAME = "static: by API name, not traced"  # ends the message of a graph rule's --static stand-in

# Where a rule's findings come from: the traced op graph, the source text (libcst, also --static), one
# traced entry's findings (offers, --verify), the run's selection (suppressions' use), or what `xlalint run` captured.
STAGES = {"graph": "check", "source": "check_source", "entry": "check_entry", "selected": "check_selected",
          "captured": "check_captured"}


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: str
    stage: str = "graph"
    check: Callable[[OpGraph, Context], Iterable[Hit]] | None = None
    fix: Fix | None = None
    check_source: Callable[[Any, SourceContext], Iterable[Pending]] | None = None
    check_text: Callable[[str, str], Iterable[Finding]] | None = None
    check_entry: Callable[[EntryContext], Iterable[Finding]] | None = None
    check_selected: Callable[[SelectedContext], Iterable[Finding]] | None = None
    check_captured: Callable[[CapturedContext], Iterable[Finding]] | None = None
    disables_xla: bool = False  # its findings say the framework runs the entry without XLA (coverage)
    said_when_off: bool = False  # its findings stand for an entry Keras keeps off XLA (its other findings do not)
    never_clustered: bool = False  # the op it flags has no XLA kernel here: auto-clustering always leaves it out

    def finding(self, message: str, hint: str, path: str, line: int, col: int = 1, entry: str = "",
                node: dict | None = None, fixable: bool = False, related: tuple = ()) -> Finding:
        """This rule's finding; ``fixable`` attaches the rule's fix."""
        return Finding(self.code, self.name, self.severity, message, hint, path, line, col, entry,
                       node["type"] if node else None, node["name"] if node else None,
                       self.fix.offer() if fixable and self.fix else None, related=related)


def with_keyword(call: Any, name: str, aliases: tuple[str, ...] = ()) -> Any:
    """A libcst call with ``name=True``, replacing the value of ``name`` or of an alias (renamed to ``name``)."""
    import libcst as cst

    true = cst.Name("True")
    keywords = (name, *aliases)
    args = [a.with_changes(value=true, keyword=cst.Name(name)) if a.keyword and a.keyword.value in keywords
            else a for a in call.args]
    if not any(a.keyword and a.keyword.value in keywords for a in call.args):
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(value=true, keyword=cst.Name(name),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return call.with_changes(args=args)


def captured_site(record: CapturedRecord) -> tuple[str, int]:
    """Where a function captured by ``xlalint run`` is reported: its ``def`` (a Keras step: the ``fit`` call)."""
    return display_path(record["path"]), record["line"]


def layer_names(names: set[str]) -> str:
    """"layer `a`", or "layers `a` and `b`" for the layers built on one line (a Bidirectional's two)."""
    quoted = [f"`{name}`" for name in sorted(names)]
    return f"layer {quoted[0]}" if len(quoted) == 1 else f"layers {', '.join(quoted[:-1])} and {quoted[-1]}"


def enclosing_places(graph: OpGraph, node: dict) -> tuple[tuple[str, str], ...]:
    """The related places of an op XLA fails on: the loops, branches and calls around it, innermost first. The
    compiler's error names each one it was compiling, with one op stack per level (measured: an inner loop's
    "Input and output shapes of loop body do not match"), and may give only their lines (a failing read in a
    cond branch comes with the cond's stack alone)."""
    return tuple((outer["id"], "the compiler's error names this enclosing loop, branch or call too, which it was "
                  "compiling") for outer in graph.enclosing(node))


def value_origin(value) -> tuple[tuple[str, str], ...]:
    """The related place of a shape value's verdict: the op it comes from (a random op, a loop, a variable)."""
    if value.origin is None:
        return ()
    reason = re.sub(r" \(line \d+\)", "", value.reason)  # the related place is that line
    return ((value.origin["id"], f"the value comes from {reason}"),)


def keras_decision_hit(code: str, message: str, hints: dict, decided: dict) -> Hit:
    """Keras' jit decision (XLA302/XLA303): one hit per model, at the line that built the deciding layer, else at its ``compile`` call."""
    layer, compiled = decided["layer"], decided["compile"]
    reason = ("layer" if layer else "strategy" if "distribution strategy" in decided["reason"]
              else "auto" if "'auto'" in decided["reason"] else "other")
    site: tuple[str, int] | None = None
    api: str | None = None
    if layer and layer["file"]:
        site, api = (layer["file"], layer["line"]), layer["class"]
    elif compiled:
        site, api = (compiled["file"], compiled["line"]), "compile"
    return Hit(code, message, hints.get(reason, hints["other"]), site=site, api=api)
