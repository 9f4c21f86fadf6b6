"""Plain result types shared by every stage after tracing (no TensorFlow here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from xlalint.core.wire import VerifyRecord

if TYPE_CHECKING:
    from xlalint.ci.baseline import BaselineOutcome
    from xlalint.ci.shards import ShardRun

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class FixOffer:
    """The edit ``--fix`` can make for a finding: its rule's fix (docs/fixes.md)."""

    kind: str
    safety: str  # "safe": applied by --fix; "unsafe": only with --unsafe-fixes
    description: str


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (shown at its line)."""

    path: str
    line: int
    message: str
    cell: dict | None = None  # in a notebook: as Finding.cell

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "message": self.message,
                **({"cell": self.cell} if self.cell else {})}


@dataclass(frozen=True)
class Finding:
    """One reason a traced entry would not compile (or would recompile) under XLA."""

    code: str
    name: str
    severity: str
    message: str
    hint: str
    path: str
    line: int
    col: int
    entry: str
    op_type: str | None = None
    op_name: str | None = None
    fix: FixOffer | None = None  # when xlalint can fix it
    fingerprint: str | None = None  # stable across line moves (xlalint.ci.baseline); set after analysis
    entries: tuple[str, ...] = ()  # every entry that reaches this place (``entry`` is the first); () = just entry
    related: tuple[Related, ...] = ()  # other places that explain it
    cell: dict | None = None  # in a notebook: {"cell", "line" (in the cell), "file_line" (of the .ipynb)}

    @property
    def where(self) -> str:
        """``path:line:col``, or ``nb.ipynb:cell 3:2:5`` in a notebook."""
        return place(self.path, self.line, self.cell, self.col)

    @property
    def file_line(self) -> int:
        """The line of the file itself: in a notebook, the .ipynb line holding the cell's source line."""
        return self.cell["file_line"] if self.cell else self.line

    @property
    def cell_prefix(self) -> str:
        """``"cell 3, line 2: "`` in a notebook, for formats that can only point at lines of the file."""
        return f"cell {self.cell['cell']}, line {self.cell['line']}: " if self.cell else ""

    @property
    def all_entries(self) -> tuple[str, ...]:
        return self.entries or (self.entry,)

    def to_json(self) -> dict:
        return {**asdict(self), "entries": list(self.all_entries), "related": [r.to_json() for r in self.related]}

    @classmethod
    def from_json(cls, data: dict) -> Finding:
        """The finding ``to_json`` wrote."""
        entries = tuple(data["entries"])
        return cls(**{**data, "fix": FixOffer(**data["fix"]) if data["fix"] else None,
                      "entries": () if entries == (data["entry"],) else entries,
                      "related": tuple(Related(**r) for r in data["related"])})


def place(path: str, line: int, cell: dict | None = None, col: int | None = None) -> str:
    """``path:line[:col]``; in a notebook ``path:cell N:line[:col]``, the line counted in the cell."""
    where = f"{path}:cell {cell['cell']}:{cell['line']}" if cell else f"{path}:{line}"
    return where if col is None else f"{where}:{col}"


def place_key(f: Finding) -> tuple:
    """What makes findings one: the same code and message (which names the op where it matters) at one place."""
    return f.code, f.path, f.line, f.col, f.message


def one_per_place(findings: list[Finding]) -> list[Finding]:
    """Findings of several entries at the same place with the same message merged into the first,
    which then names every entry (in the order they were checked)."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = place_key(f)
        first = merged.get(key)
        if first is None:
            merged[key] = f
            continue
        names = first.all_entries + tuple(n for n in f.all_entries if n not in first.all_entries)
        related = first.related + tuple(r for r in f.related if r not in first.related)
        merged[key] = replace(first, entries=names, related=related)
    return list(merged.values())


@dataclass(frozen=True)
class Entry:
    """A traceable (or not traceable) thing found in a file."""

    path: str
    name: str
    line: int
    verdict: str  # "compatible" | "incompatible" | "runs" (auto-clustered, ops left out) | "unknown"
    error: str | None = None
    verify: VerifyRecord | None = None  # with --verify: what compiling and running it showed
    autocluster: dict | None = None  # under auto-clustering: the predicted clusters (xlalint.autocluster.judge)
    ops: int | None = None  # ops that do work in its graph (xlalint.engine.coverage.count_ops); None: not traced
    jit_compile: bool | None = None  # its tf.function's jit_compile setting, as traced; Keras' decision for a model
    xla_off: str | None = None  # why Keras runs this compiled model without XLA on the target device
    keras_refuses_jit: bool = False  # Keras would turn jit_compile=True off for this model too
    cell: dict | None = None  # in a notebook: as Finding.cell
    # how the program runs it (xlalint.autocluster.program): "jit_compile" | "auto-clustering" |
    # "as-if-jit_compile", where that was read, and what xlalint could not tell
    xla_mode: str | None = None
    xla_mode_source: str | None = None
    xla_mode_note: str | None = None
    # the devices of the variables it reads, where several (a distribution strategy's copies): XLA305
    variable_devices: list[str] | None = None

    @property
    def where(self) -> str:
        return place(self.path, self.line, self.cell)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked at all, or only in part; a ``notice`` (TensorFlow but no entry
    point) fails the run only with ``--strict``."""

    path: str
    message: str
    notice: bool = False

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Report:
    """Everything one run found, in the order the files were given."""

    device: str
    tensorflow: str | None = None
    entries: list[Entry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    interrupted: str | None = None  # the signal that cut the run short ("SIGINT", "SIGTERM"), if one did
    sources: dict[str, str] = field(default_factory=dict)  # absolute path -> SHA-256 of the bytes analysed
    auto_jit: list[str] = field(default_factory=list)  # --static: "path:line" of the checked files' auto-jit settings
    baseline: "BaselineOutcome | None" = None  # with --baseline: what the baseline hid and what went away
    run: dict | None = None  # `xlalint run`: the script, where and why its run stopped, what it wrote
    runs: list[dict] = field(default_factory=list)  # `xlalint run` of listed commands: a `run` each, with its command
    shard: "ShardRun | None" = None  # with --shard: which shard, and each result's place in the whole run
    tables: dict | None = None  # which shipped (or generated) tables the run used (xlalint.core.tables.used)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)
