"""The records that cross from the tracing process to the parent, and land in caches and saved graphs.

Plain JSON-ready dicts, typed here once. ``FORMAT`` is written into every exported graph (and
so into every cache entry and saved graph); a graph of another format is refused on load with
a clear message instead of being misread.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

FORMAT = 6  # bump when any record below changes shape (e.g. a new exported attr)


class FormatError(ValueError):
    """A graph written by another version of xlalint's exporter."""


class Tensor(TypedDict):
    dtype: str
    shape: list[int | None] | None  # None: unknown rank; None in it: unknown dimension


class Input(Tensor):
    src: str  # id of the producing op
    index: int  # which output of it
    arg: str | None  # the op-def argument name ("shape", "axis"...)


class OpNode(TypedDict, total=False):
    id: str  # "function:op_name"
    name: str
    type: str
    function: str
    attrs: dict  # dtype attrs, e.g. {"T": "float32"}
    calls: dict[str, list[str]]  # function-typed attrs -> called function names
    inputs: list[Input]
    outputs: list[Tensor]
    frames: list[list]  # [[file, line, function]]: the innermost user frame
    layer: dict | None  # the Keras layer that made the op (keras_sites.LayerSite.to_json; ``called_at`` may be absent)
    value: list | None  # a small integer constant's value
    xla_attrs: dict  # XLA-relevant attrs (_XlaCompile, _XlaScope...), only where present
    stateful: bool  # the op registry marks the op stateful (TensorFlow never folds it); only where true


class Function(TypedDict):
    inputs: list[str]  # op ids of its arguments
    outputs: list[list]  # [[op id, output index]] of its results


class _GraphFacts(TypedDict, total=False):
    onednn: bool  # TensorFlow ran with oneDNN where it was traced (absent in older saved graphs: assumed)


class Graph(_GraphFacts):
    format: int
    root: str
    num_args: int
    functions: dict[str, Function]
    nodes: list[OpNode]


class VerifyRecord(TypedDict):
    """What compiling and running an entry with and without XLA showed (docs/verify.md)."""

    device: str | None
    compiled: bool
    error: str | None
    allclose: bool | None
    max_abs_diff: float | None
    compile_s: float | None
    xla_step_s: float | None
    tf_step_s: float | None
    speedup: float | None
    xla_peak_bytes: int | None
    tf_peak_bytes: int | None
    memory_method: str | None
    compilations: int | None
    training_step: bool
    error_op: str | None


class EntryRecord(TypedDict, total=False):
    name: str
    line: int
    # "function" | "tf.function" | "keras-model" | "keras-builder" | "keras-fit" | "saved-model-signature" |
    # "model-wrapper" (``tf.function(model)`` at module level, traced on the model's inputs)
    kind: str
    jit_compile: bool | None
    error: str | None  # why it was not traced
    graph: Graph | None
    signature: list[dict]  # [{"dtype", "shape"}] of the arguments
    keras_layers: list[dict]  # layers Keras runs without XLA (XLA301)
    keras: dict  # a compiled Keras model: {"requested", "devices": {device: {"jit", "reason", "layer"}}}
    verify: VerifyRecord
    timing: dict  # {"trace_s", "export_s"}
    resource_devices: list[str]  # the devices of the variables it reads, where more than one (XLA305)
    seen_mode: Any  # xlalint run: auto-clustering as the run showed it (autocluster.program.Seen)
    covers: list[EntryRecord]  # discovered models its trace called, checked as part of it (not traced on their own)


class PartialBatch(TypedDict):
    """A ``batch``/``padded_batch`` of a user's dataset that leaves a smaller last batch (backend/run/batches.py)."""

    site: list  # [file, line, function] of the call
    batch_size: int
    size: int | None  # the dataset's elements; None: not known
    left: int | None  # the last batch's; None: not known
    relaxed: list[dict]  # the dataset's element spec: [{"dtype", "shape"}]


class AutoJit(TypedDict):
    """What turned auto-clustering on when a function was captured."""

    where: list | None  # [file, line] of the script's set_jit call
    flags: str | None  # TF_XLA_FLAGS, where they turned it on
    cpu_global_jit: bool  # they hold --tf_xla_cpu_global_jit


class CapturedRecord(EntryRecord, total=False):
    """One function captured at its first call (``xlalint run``, or a checked file's import), as the run saw
    it (backend/run/capture.py)."""

    path: str  # the file of its def (a Keras step without its own: of the fit call)
    call: list | None  # [file, line, function] of its first call
    traces: int
    calls: int
    trace_args: list[list[list[str]]]  # per trace: [[argument, description], ...]
    functions: int  # tf.function objects of its definition called
    made_at: list[list]  # [file, line, function] where they were made
    batches: list[PartialBatch]  # the partial batches that fed it
    dataset_specs: list[list[dict]]  # the relaxed specs of the datasets that fed it
    variables: list[list]  # [file, line, function] of the variables its first trace made
    unliftable: str | None  # why TensorFlow could not lift them out of the function
    auto_jit: AutoJit | None  # None: auto-clustering was off


def captured_records(entries: list[EntryRecord]) -> list[CapturedRecord]:
    """The entries that were captured at their first call (a run's, or a checked file's import), not discovered."""
    return [cast(CapturedRecord, e) for e in entries if "traces" in e]


class Target(TypedDict):
    name: str
    specs: list[str] | None  # None: the function's own input_signature


class VerifyRequest(TypedDict):
    device: str | None  # "cpu" | "gpu"; None: the GPU when there is one, else the CPU


DEFAULT_PATIENCE = 2  # calls of captured functions tracing nothing new, per function, before user code is stopped
IMPORT_SHARE = 0.75  # of a file's --timeout, what its import may take (``Request.import_budget``); the rest: tracing


class Request(TypedDict, total=False):
    path: str
    targets: list[Target]
    discover: bool  # also find entries by discovery, not only the named targets
    verify: VerifyRequest | None
    saved_model: bool
    patience: int  # calls of captured functions that trace nothing new before the import is stopped (default 2)
    import_budget: float  # seconds the file's import may run (default: until the parent's --timeout)
    first_step: bool  # compiled functions called at import return real values (run eagerly), not zeros
    result: str  # where the child writes its FileResult (set by the worker client)
    log: str  # where the child's output goes


class FileResult(TypedDict, total=False):
    type: str  # "file"
    path: str
    entries: list[EntryRecord]
    error: str | None
    deps: list[str]  # user files loaded or opened: what a cached result depends on
    zeros_from: str | None  # the import failed after this compiled function answered it with zeros
    seconds: float


def entry_record(name: str, line: int, kind: str, jit_compile: bool | None, signature: list[dict],
                 graph: Graph | None = None, error: str | None = None) -> EntryRecord:
    """The one builder of an entry record (worker, in-process API, SavedModel signatures)."""
    return {"name": name, "line": line, "kind": kind, "jit_compile": jit_compile, "error": error,
            "graph": graph, "signature": signature}


def file_result(path: str, error: str | None = None, entries: list[EntryRecord] | None = None) -> FileResult:
    """The one builder of a file's result (the worker's, or why the worker gave none)."""
    return {"type": "file", "path": path, "entries": entries or [], "error": error}


def check_format(graph: Graph) -> None:
    """Refuse a graph of another exporter format (e.g. saved by an older xlalint)."""
    found = graph.get("format")
    if found != FORMAT:
        raise FormatError(f"graph format {found} is not this xlalint's ({FORMAT}): trace the file again "
                          "(or save the graph again with --save-graphs)")
