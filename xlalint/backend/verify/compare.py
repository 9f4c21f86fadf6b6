"""Run an entry for real, under XLA and under plain TensorFlow, and compare the two.

``verify_entry(candidate)`` answers what static analysis can only predict: does the
entry compile and run under XLA, do the results agree, how long does compiling take,
is a step faster, how much memory does a step use, how many executables does XLA build.
Training steps (graphs that update variables) run several steps on each side from the
same variable values, and the variables are put back as they were afterwards.
"""

from __future__ import annotations

import re
import statistics
import time
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
import tensorflow as tf

from xlalint.backend.verify.peak_memory import ALLOCATOR, CHILD_RSS, allocator_peak, child_peaks, run as _run
from xlalint.core.wire import VerifyRecord

FIELDS = tuple(VerifyRecord.__annotations__)  # the verify record's fields, in the order it is reported

# Ops that write to a variable: a graph with one of them is treated as a training step.
_UPDATE_OP = re.compile(r"^(Assign(Add|Sub)?VariableOp|Resource(Sparse)?Apply\w+|ResourceScatter\w+)$")
# Ops that draw random numbers (stateful or stateless): XLA and TensorFlow draw different ones.
_RANDOM_OP = re.compile(r"Random|TruncatedNormal|Multinomial|Stateful(Uniform|StandardNormal)|RngReadAndSkip")

# (rtol, atol per unit of magnitude): atol is scaled by max(1, max|reference|), since XLA
# reorders reductions and the rounding error of a sum grows with its values.
_TOLERANCE = {tf.float64: (1e-7, 1e-9), tf.float32: (1e-4, 1e-5), tf.float16: (1e-2, 1e-3),
              tf.bfloat16: (5e-2, 1e-2), tf.complex128: (1e-7, 1e-9), tf.complex64: (1e-4, 1e-5)}
_TRAINING_SLACK = 10  # several steps compound the rounding differences

# The profiler events XLA emits once per executable it builds, by device kind; a release emits one of them.
# CPU, measured per release (bench/version_matrix.py's environments): "CpuCompiler::CompileLegacyCpuExecutable"
# on 2.18, "CpuCompiler::RunBackend" from 2.19; 2.16 and 2.17 emit no event for an XLA:CPU build at the
# profiler's default level, so their executables are not counted there (None). GPU: GpuCompiler::RunHloPasses
# annotates "HLO Transforms:<module>" (per xla/service/gpu/gpu_compiler.cc, not checked here); autotuning
# builds skip RunHloPasses.
_BUILD_EVENT = {"CPU": ("CpuCompiler::RunBackend", "CpuCompiler::CompileLegacyCpuExecutable"),
                "GPU": ("HLO Transforms:",)}
_SILENT = {"CPU": ("2.16.", "2.17.")}  # releases whose builds on that device kind leave no profiler event


def counts_executables(device: str) -> bool:
    """Whether this TensorFlow's profiler shows each executable XLA builds on ``device`` ("CPU", "GPU:0")."""
    return not tf.__version__.startswith(_SILENT.get(device.split(":")[0].upper(), ()))

_UNSUPPORTED_OP = re.compile(r"on XLA_\w+?_JIT: (\w+) \(")
_CONSTANT_INPUT_OP = re.compile(r"with op (\w+) must be a compile-time constant")
_NODE = re.compile(r"\{\{node ([^}]+)\}\}")
_MESSAGE_NOISE = re.compile(r"\[_XlaMustCompile=[^\]]*\]|\s*\[Op:[^\]]*\]")
_NOT_A_MESSAGE = ("Graph execution error", "Detected at node", "The op is created at", "File ")


class CannotVerify(Exception):
    """The entry cannot be run here (string arguments, unknown rank, no such device...)."""


def verify_entry(candidate, *, device=None, steps=5, runs=10, seed=0, fill_dim=8) -> VerifyRecord:
    """Compile and run ``candidate`` under XLA and plain TensorFlow: a JSON-ready report.

    ``device``: "cpu" or "gpu" (default: GPU:0 when TensorFlow sees a GPU). ``steps``: steps
    run on each side before comparing, for training steps (others are compared after one
    call). ``runs``: timed calls per side. ``seed``, ``fill_dim``: see ``make_inputs``.

    Fields, null where not measured (when XLA fails: all but device, compiled, error,
    error_op, compilations and training_step):
    device: "CPU:0" or "GPU:0". compiled: XLA compiled *and ran* it. error: the compiler's
    first meaningful line, or why nothing could be run ("cannot verify: ..."). error_op: the
    op type the error names. allclose: XLA and plain outputs (for training steps: the outputs
    of the last step and every variable the step touches) agree within dtype-aware
    tolerances (null when the graph draws random numbers: XLA and TensorFlow draw different
    ones); max_abs_diff: the largest |XLA - plain| over them, where both are finite.
    compile_s: the first XLA call (trace, compile, run), seconds. xla_step_s / tf_step_s:
    median of ``runs`` calls after one warm-up call; speedup: tf_step_s / xla_step_s.
    xla_peak_bytes / tf_peak_bytes: peak memory of one call after a warm-up, never 0;
    memory_method: how it was measured (null when neither figure was): "allocator-peak" on
    GPU (the allocator's peak, including what was already allocated), "child-rss-hwm" on
    CPU (resident-memory growth of a fresh child process; see ``peak_memory``).
    compilations: executables XLA built during the compared calls (see
    ``count_compilations``; the tracing count when the profiler is busy). training_step:
    the graph updates variables.
    """
    result: dict[str, Any] = {**dict.fromkeys(FIELDS), "compiled": False, "training_step": False}
    try:
        result["device"] = _device(device)
        with tf.device(f"/{result['device']}"):
            _verify(candidate, result, max(1, steps), max(1, runs), seed, fill_dim)
    except CannotVerify as reason:
        result["error"] = f"cannot verify: {reason}"
    return cast(VerifyRecord, result)


def count_compilations(candidate, input_sets, *, device=None) -> int | None:
    """How many executables XLA builds to run ``candidate`` once on each of ``input_sets``.

    Counted from XLA's own profiler annotation, one per executable built, in a profiler
    session around the calls. This sees what a tf.function's tracing count cannot: one trace
    compiled again for each new value of an argument XLA needs as a compile-time constant
    (a size given to tf.reshape, say). None when no profiler session can be started (one is
    already running). ``input_sets``: flat input lists, e.g. from ``make_inputs``.
    """
    device = _device(device)
    xla = tf.function(candidate.python_function, jit_compile=True)
    with tf.device(f"/{device}"), compilations(device) as built:
        for inputs in input_sets:
            _run(xla, _arguments(candidate, inputs))
    return built["count"]


def make_inputs(specs, *, seed=0, fill_dim=8, scalar_int=2) -> list:
    """Seeded random tensors for ``specs``: floats N(0, 1), integers in [0, 3) except scalars,
    which are ``scalar_int`` so that they work as sizes, fair booleans; None dims are ``fill_dim``."""
    rng = np.random.default_rng(seed)
    return [_random_tensor(spec, rng, fill_dim, scalar_int) for spec in specs]


def _random_tensor(spec, rng, fill_dim: int, scalar_int: int):
    if spec.shape.rank is None:
        raise CannotVerify("an argument has unknown rank")
    shape = [fill_dim if d is None else d for d in spec.shape.as_list()]
    dtype = tf.as_dtype(spec.dtype)
    if dtype.is_bool:
        values = rng.random(shape) < 0.5
    elif dtype.is_integer:
        values = rng.integers(0, 3, shape) if shape else np.array(scalar_int)
    elif dtype.is_complex:
        values = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    elif dtype.is_floating:
        values = rng.standard_normal(shape)
    else:
        raise CannotVerify(f"no random inputs for {dtype.name} arguments")
    return tf.cast(values, dtype)


def _device(requested) -> str:
    has_gpu = bool(tf.config.list_physical_devices("GPU"))
    kind = (requested or ("gpu" if has_gpu else "cpu")).split(":")[0].upper()
    if kind not in _BUILD_EVENT:
        raise CannotVerify(f"unknown device {requested!r}: use 'cpu' or 'gpu'")
    if kind == "GPU" and not has_gpu:
        raise CannotVerify("no GPU is visible to TensorFlow")
    return f"{kind}:0"


def _arguments(candidate, flat: list) -> list:
    """Flat inputs packed into the function's own input_signature when it is traced with it."""
    if getattr(candidate, "use_signature", False):
        return tf.nest.pack_sequence_as(list(candidate.function.input_signature), flat)
    return flat


def _verify(candidate, result: dict[str, Any], steps: int, runs: int, seed: int, fill_dim: int) -> None:
    if candidate.python_function is None:
        raise CannotVerify(candidate.reason or "nothing to trace")
    inputs = _arguments(candidate, make_inputs(candidate.specs, seed=seed, fill_dim=fill_dim))
    xla = tf.function(candidate.python_function, jit_compile=True)
    plain = tf.function(candidate.python_function, jit_compile=False)
    try:
        concrete = plain.get_concrete_function(*inputs)
    except Exception as error:  # user code: report, never crash
        raise CannotVerify(f"tracing failed: {_message(error)}") from error
    op_types = _op_types(concrete.graph)
    result["training_step"] = any(_UPDATE_OP.match(op) for op in op_types.values())
    calls = steps if result["training_step"] else 1
    with _restored(concrete.variables if result["training_step"] else ()) as state:
        try:
            with compilations(result["device"]) as built:
                start = time.perf_counter()
                xla_out = _run(xla, inputs)
                result["compile_s"] = time.perf_counter() - start
                if calls > 1:
                    xla_out = _run(xla, inputs, calls - 1)
        except Exception as error:  # the compiler's verdict is the point
            result.update(error=_message(error), error_op=_error_op(str(error), op_types),
                          compilations=built["count"])
            return
        count = built["count"]
        result.update(compiled=True, compilations=xla.experimental_get_tracing_count() if count is None else count)
        xla_state = state.values()
        state.restore()
        try:
            plain_out = _run(plain, inputs, calls)
        except Exception as error:  # XLA ran it and TensorFlow did not: say so, never crash
            result["error"] = f"plain TensorFlow failed: {_message(error)}"
            return
        slack = _TRAINING_SLACK if result["training_step"] else 1
        close, result["max_abs_diff"] = compare(
            _flat(xla_out) + xla_state, _flat(plain_out) + state.values(), slack)
        result["allclose"] = None if any(_RANDOM_OP.search(op) for op in op_types.values()) else close
        for name, fn in (("xla", xla), ("tf", plain)):
            state.restore()
            result[f"{name}_step_s"] = median_seconds(fn, inputs, runs)
        state.restore()
        _peak_memory(result, candidate, {"xla": xla, "tf": plain}, inputs, concrete.variables)
    result["speedup"] = result["tf_step_s"] / result["xla_step_s"] if result["xla_step_s"] else None


def _peak_memory(result: dict, candidate, sides: dict, inputs, variables) -> None:
    """Fill the peak-memory fields: the allocator's figures on GPU, fresh child processes' on CPU."""
    device = result["device"]
    if device.startswith("GPU"):
        method = ALLOCATOR
        peaks = {name: allocator_peak(lambda fn=fn: _run(fn, inputs), device) for name, fn in sides.items()}
    else:
        method = CHILD_RSS
        peaks = child_peaks(lambda *flat: candidate.python_function(*_arguments(candidate, list(flat))),
                            tf.nest.flatten(inputs), variables)
    result.update(xla_peak_bytes=peaks["xla"], tf_peak_bytes=peaks["tf"])
    if peaks["xla"] is not None or peaks["tf"] is not None:
        result["memory_method"] = method


def median_seconds(fn, inputs, runs: int) -> float:
    _run(fn, inputs)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        _run(fn, inputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _Snapshot:
    """Values of ``variables`` now (host copies), and putting them back."""

    def __init__(self, variables):
        self.variables = list(variables)
        self.saved = self.values()

    def values(self) -> list:
        return [v.numpy() for v in self.variables]

    def restore(self) -> None:
        for variable, value in zip(self.variables, self.saved):
            variable.assign(value)


@contextmanager
def _restored(variables):
    snapshot = _Snapshot(variables)
    try:
        yield snapshot
    finally:
        snapshot.restore()


@contextmanager
def compilations(device: str):
    """Yield a dict whose "count" is, after the block, the executables XLA built in it (or None: no profiler
    session, or a release whose builds leave no event, ``counts_executables``)."""
    built: dict[str, int | None] = {"count": None}
    session = _start_profiler() if counts_executables(device) else None
    try:
        yield built
    finally:
        if session is not None:
            built["count"] = _count_builds(session, device)


def _start_profiler():
    try:
        from tensorflow.python.profiler.internal import _pywrap_profiler

        session = _pywrap_profiler.ProfilerSession()
        # Default options: host tracer level 2 records XLA's info-level annotations. (TF 2.21
        # rejects every option value given from Python, so asking for less is not possible.)
        session.start("", {})
        return session
    except Exception:  # another session is running, or the private API moved
        return None


def _count_builds(session, device: str) -> int | None:
    try:
        from tensorflow.tsl.profiler.protobuf import trace_events_pb2

        trace = trace_events_pb2.Trace.FromString(session.stop())
    except Exception:  # not the trace-events format this was written against
        return None
    return sum(event.name.startswith(_BUILD_EVENT[device.split(":")[0]]) for event in trace.trace_events)


def _op_types(graph) -> dict[str, str]:
    """Node name -> op type, over the graph and every function in its library."""
    graph_def = graph.as_graph_def()
    nodes = list(graph_def.node)
    for function in graph_def.library.function:
        nodes.extend(function.node_def)
    return {node.name: node.op for node in nodes}


def _message(error: BaseException) -> str:
    """The first line of an error that says what went wrong, without TensorFlow's boilerplate."""
    lines = (_MESSAGE_NOISE.sub("", line).strip() for line in str(error).splitlines())
    line = next((line for line in lines if line and not line.startswith(_NOT_A_MESSAGE)), "")
    if isinstance(error, tf.errors.OpError) and line:
        return line
    return f"{type(error).__name__}: {line}" if line else type(error).__name__


def _error_op(message: str, op_types: dict[str, str]) -> str | None:
    """The op type a compiler error names, directly or through the node it names."""
    for pattern in (_UNSUPPORTED_OP, _CONSTANT_INPUT_OP):
        match = pattern.search(message)
        if match:
            return match.group(1)
    match = _NODE.search(message)
    return op_types.get(match.group(1)) if match else None


def _flat(outputs) -> list:
    return [np.asarray(t.numpy() if hasattr(t, "numpy") else t)
            for t in tf.nest.flatten(outputs, expand_composites=True)]


def compare(got: list, want: list, slack: float) -> tuple[bool, float | None]:
    """(all within tolerance, max |got - want| where both are finite) over paired arrays."""
    if len(got) != len(want) or any(np.shape(g) != np.shape(w) for g, w in zip(got, want)):
        return False, None
    close, worst = True, 0.0
    for g, w in zip(got, want):
        dtype = _dtype(w)
        if dtype is None:  # not numbers: must be equal
            close &= bool(np.array_equal(g, w))
            continue
        wide = np.complex128 if dtype.is_complex else np.float64
        g, w = g.astype(wide), w.astype(wide)
        finite = np.isfinite(g) & np.isfinite(w)
        scale = 1.0
        if finite.any():
            worst = max(worst, float(np.abs(g[finite] - w[finite]).max()))
            scale = max(scale, float(np.abs(w[finite]).max()))
        if dtype.is_floating or dtype.is_complex:
            rtol, atol = _TOLERANCE.get(dtype, _TOLERANCE[tf.float32])
            close &= bool(np.allclose(g, w, rtol=rtol * slack, atol=atol * slack * scale, equal_nan=True))
        else:
            close &= bool(np.array_equal(g, w))  # integers and booleans: exact
    return close, worst


def _dtype(array: np.ndarray):
    try:
        dtype = tf.as_dtype(array.dtype)
    except TypeError:
        return None
    return dtype if (dtype.is_floating or dtype.is_complex or dtype.is_integer or dtype.is_bool) else None
