"""Generate xlalint/data/static_api_tf<VERSION>.json, the table behind ``xlalint --static``.

Regenerate for the installed TensorFlow (release time; takes a few minutes):

    python tools/gen_api_table.py                 # writes xlalint/data/static_api_tf<VERSION>.json
    python tools/gen_api_table.py --out FILE.json

For each public function of NAMESPACES (plus the static/class methods of CLASSES and the
classes of CLASS_NAMESPACES) the table records the op types one call creates:

* op wrapper: a name bound to a generated op wrapper (``tf.raw_ops.X``, ``gen_*_ops``
  functions exported under other names) creates exactly that op. The op is found by the
  wrapper's code object, which ``tf.raw_ops.<Op>`` shares.
* traced: any other function is called once inside a ``tf.function`` (autograph off) on
  symbolic inputs: the hand-written call of ``_examples`` when there is one, else with each of
  PROFILES (dtypes and shapes for its required parameters) that traces, keeping the op types
  common to all those calls. Op types come from the graph and its function library, minus
  the inputs' Placeholders.
* untraced: no profile fits. These are left out, so ``--static`` says nothing about them.

Each op is then looked up in the XLA support table of the same TensorFlow
(``xlalint/data/support_tf<VERSION>.json``): ``unsupported`` lists the ops with no XLA kernel
on cpu or gpu (``no_kernel`` gives them per device), and ``dynamic_shape`` is set when a
data-dependent-shape op (XLA103's list) is among them. Only APIs with an unsupported or a
dynamic-shape op are written. ``stateful``: one of the ops is stateful, so TensorFlow does not
constant-fold the call even when all its arguments are constants. ``max_args`` (from ``_examples``
with several call forms): the ops hold only for calls with at most that many arguments
(``tf.where(c)`` makes a ``Where`` op, ``tf.where(c, x, y)`` a ``SelectV2``). ``by_keyword``
(from ``_keyword_examples``): the ops without a kernel that a string keyword value adds
(``tf.image.resize(..., method="area")`` makes a ``ResizeArea``).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402
from tensorflow.python.util import tf_decorator  # noqa: E402

from xlalint.analyses.data_dependent import DATA_DEPENDENT  # noqa: E402
from xlalint.checks.xla001_unsupported_op import ALWAYS_COMPILED  # noqa: E402
from xlalint.core.specs import parse_spec  # noqa: E402
from xlalint.core.support import LOCAL_DEVICES, load_support  # noqa: E402

NAMESPACES = (
    "", "audio", "bitwise", "data", "data.experimental", "debugging", "dtypes", "image", "io", "linalg",
    "math", "nn", "ragged", "random", "raw_ops", "signal", "sparse", "strings",
    "compat.v1", "compat.v1.image", "compat.v1.math", "compat.v1.nn", "compat.v1.sparse", "compat.v1.strings",
)
CLASSES = ("data.Dataset", "RaggedTensor")
CLASS_NAMESPACES = frozenset({"data", "data.experimental"})
# Never called: they change global state (eager mode, seeds, check-numerics, dump directories).
UNSAFE = re.compile(r"\.(enable|disable|set|reset)_\w*$|\.(enable_eager_execution|load_library|load_op_library)$")

# Argument dtypes/shapes for a function's required parameters: the last one fills all the remaining
# parameters. "sparse" and "ragged" are composite inputs.
PROFILES = (
    ("float32[4,4]",), ("float32[4]",), ("float32[4]", "int32[4]"), ("float32[4,4]", "int32[4]"),
    ("float32[4]", "int32[4]", "int32[]"), ("float32[4,4]", "int32[]"), ("float32[4]", "bool[4]"),
    ("int32[4]",), ("int64[4]",), ("int32[]",), ("int64[]",), ("bool[4]",), ("bool[4]", "float32[4]"),
    ("string[4]",), ("string[]",), ("string[4]", "int32[4]"), ("string[4]", "int32[4]", "int32[]"),
    ("float32[2,8,8,3]", "float32[]"), ("float32[8,8,3]", "float32[]"), ("uint8[8,8,3]",),
    ("float32[4,2,5]", "int32[2]"), ("complex64[4,4]",), ("int32[2]", "float32[4]"),
    ("int32[2]", "int32[2]", "float32[4]"),
    ("sparse",), ("sparse", "float32[4,4]"), ("sparse", "float32[]"), ("ragged",),
)
TRACE_TIMEOUT_S = 30


def _examples() -> dict[str, list[tuple[tuple[str, ...], object]]]:
    """Hand-written calls for functions the profiles cannot call (Python arguments, callbacks, several forms)."""
    def host(fn):
        return lambda x: fn(lambda a: a, [x], tf.float32)

    boxes = ("float32[8,4]", "float32[8]")
    feature = tf.io.FixedLenFeature([1], tf.float32)
    return {
        "tf.print": [(("float32[4]",), lambda x: tf.print("x:", x))],
        "tf.compat.v1.Print": [(("float32[4]",), lambda x: tf.compat.v1.Print(x, [x]))],
        "tf.py_function": [(("float32[4]",), host(tf.py_function))],
        "tf.numpy_function": [(("float32[4]",), host(tf.numpy_function))],
        "tf.compat.v1.py_func": [(("float32[4]",), host(tf.compat.v1.py_func))],
        "tf.strings.format": [(("float32[4]",), lambda x: tf.strings.format("{}", x))],
        "tf.histogram_fixed_width": [
            (("float32[16]",), lambda x: tf.histogram_fixed_width(x, [0.0, 1.0], nbins=4))],
        "tf.histogram_fixed_width_bins": [
            (("float32[16]",), lambda x: tf.histogram_fixed_width_bins(x, [0.0, 1.0], nbins=4))],
        "tf.image.crop_and_resize": [(
            ("float32[1,8,8,3]", "float32[2,4]", "int32[2]"),
            lambda image, box, index: tf.image.crop_and_resize(image, box, index, [4, 4]))],
        "tf.image.non_max_suppression": [(boxes, lambda b, s: tf.image.non_max_suppression(b, s, 4))],
        "tf.image.non_max_suppression_with_scores": [
            (boxes, lambda b, s: tf.image.non_max_suppression_with_scores(b, s, 4))],
        "tf.image.non_max_suppression_padded": [
            (boxes, lambda b, s: tf.image.non_max_suppression_padded(b, s, 4))],
        "tf.strings.join": [(("string[4]", "string[4]"), lambda a, b: tf.strings.join([a, b]))],
        "tf.strings.to_hash_bucket": [(("string[4]",), lambda s: tf.strings.to_hash_bucket(s, 8))],
        "tf.strings.ngrams": [(("string[4]",), lambda s: tf.strings.ngrams(s, 2))],
        "tf.strings.unicode_decode": [(("string[4]",), lambda s: tf.strings.unicode_decode(s, "UTF-8"))],
        "tf.strings.unicode_split": [(("string[4]",), lambda s: tf.strings.unicode_split(s, "UTF-8"))],
        "tf.strings.unicode_encode": [(("int32[2,4]",), lambda c: tf.strings.unicode_encode(c, "UTF-8"))],
        "tf.io.decode_raw": [(("string[4]",), lambda s: tf.io.decode_raw(s, tf.uint8))],
        "tf.io.decode_csv": [(("string[4]",), lambda s: tf.io.decode_csv(s, [[0.0], [0.0]]))],
        "tf.io.parse_example": [
            (("string[4]",), lambda s: tf.io.parse_example(s, {"x": feature}))],
        "tf.io.parse_single_example": [
            (("string[]",), lambda s: tf.io.parse_single_example(s, {"x": feature}))],
        "tf.sparse.concat": [(("sparse", "sparse"), lambda a, b: tf.sparse.concat(0, [a, b]))],
        "tf.sparse.cross": [(("string[4,1]", "string[4,1]"), lambda a, b: tf.sparse.cross([a, b]))],
        "tf.sparse.cross_hashed": [
            (("string[4,1]", "string[4,1]"), lambda a, b: tf.sparse.cross_hashed([a, b], 8))],
        "tf.ragged.cross": [(("string[4,1]", "string[4,1]"), lambda a, b: tf.ragged.cross([a, b]))],
        "tf.image.combined_non_max_suppression": [(
            ("float32[1,8,1,4]", "float32[1,8,2]"),
            lambda b, s: tf.image.combined_non_max_suppression(b, s, 4, 4))],
        "tf.image.non_max_suppression_overlaps": [
            (("float32[8,8]", "float32[8]"), lambda o, s: tf.image.non_max_suppression_overlaps(o, s, 4))],
        "tf.data.Dataset.from_generator": [((), lambda: tf.data.Dataset.from_generator(
            lambda: iter([1]), output_signature=tf.TensorSpec([], tf.int32)))],
        "tf.data.Dataset.counter": [((), lambda: tf.data.Dataset.counter())],
        "tf.random.gamma": [(("float32[4]",), lambda a: tf.random.gamma([2], a))],
        "tf.random.stateless_gamma": [(("float32[4]",), lambda a: tf.random.stateless_gamma([4], [1, 2], a))],
        "tf.where": [(("bool[4]",), tf.where), (("bool[4]", "float32[4]", "float32[4]"), tf.where)],
        "tf.compat.v1.where": [(("bool[4]",), tf.compat.v1.where),
                               (("bool[4]", "float32[4]", "float32[4]"), tf.compat.v1.where)],
        "tf.compat.v1.where_v2": [(("bool[4]",), tf.compat.v1.where_v2),
                                  (("bool[4]", "float32[4]", "float32[4]"), tf.compat.v1.where_v2)],
    }


def _keyword_examples() -> dict[str, tuple]:
    """APIs whose blockers depend on a string keyword: ``(specs, call, keyword, values)``."""
    methods = ("area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest")
    return {"tf.image.resize": (("float32[1,8,8,3]",), lambda x, **kw: tf.image.resize(x, [4, 4], **kw),
                                "method", methods)}


def _spec(text: str):
    if text == "sparse":
        return tf.SparseTensorSpec([4, 4], tf.float32)
    if text == "ragged":
        return tf.RaggedTensorSpec([4, None], tf.float32, ragged_rank=1)
    spec = parse_spec(text)
    return tf.TensorSpec(spec.shape, spec.dtype)


class TraceTimeout(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: int):
    def expire(signum, frame):
        raise TraceTimeout(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def trace_ops(call, specs) -> set[str]:
    """Op types one call of ``call`` on symbolic inputs of ``specs`` creates (function bodies included)."""
    def body(*args):
        call(*args)  # the result is not needed: every op created stays in the graph

    with _deadline(TRACE_TIMEOUT_S):
        graph = tf.function(body, autograph=False).get_concrete_function(*map(_spec, specs)).graph
        graph_def = graph.as_graph_def()
    ops = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        ops |= {node.op for node in function.node_def}
    return ops - ALWAYS_COMPILED


def _required_arity(fn) -> int | None:
    """How many required parameters to fill: positional and keyword-only without default; None if unknown."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    required = [p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if required:
        return len(required)
    return 1 if any(p.kind == p.VAR_POSITIONAL for p in params) else 0


def trace_by_profiles(fn) -> tuple[set[str], int] | None:
    """``(ops, forms)``: the ops created by every profile that traces and how many did; None if none did.

    Keeping only the ops common to all fitting profiles drops those of one call form only
    (``tf.repeat`` makes a ``Where`` for a vector of repeats, not for a scalar).
    """
    arity = _required_arity(fn)
    if not arity:
        return None
    common, forms = None, 0
    for profile in PROFILES:
        specs = profile[:arity] + profile[-1:] * (arity - len(profile))
        try:
            ops = trace_ops(fn, specs)
        except Exception:  # noqa: BLE001 - any failure means "this profile does not fit"
            continue
        common, forms = (ops if common is None else common & ops), forms + 1
    return (common, forms) if forms else None


def _resolve(path: str):
    obj = tf
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj


def public_callables() -> dict[int, tuple[object, list[str]]]:
    """``{id(target): (callable, [public names])}``: one group per distinct function or class."""
    groups: dict[int, tuple[object, list[str]]] = {}

    def add(name: str, obj, target) -> None:
        groups.setdefault(id(target), (obj, []))[1].append(name)

    for namespace in NAMESPACES:
        module = _resolve(namespace)
        prefix = "tf." + (namespace + "." if namespace else "")
        for name in dir(module):
            obj = getattr(module, name, None)
            if name.startswith("_") or obj is None or inspect.ismodule(obj):
                continue
            if inspect.isclass(obj):
                if namespace in CLASS_NAMESPACES:
                    add(prefix + name, obj, obj)
            elif callable(obj):
                add(prefix + name, obj, tf_decorator.unwrap(obj)[1])
    for class_path in CLASSES:
        cls = _resolve(class_path)
        for name in dir(cls):
            static = isinstance(inspect.getattr_static(cls, name), (staticmethod, classmethod))
            if static and not name.startswith("_"):
                method = getattr(cls, name)
                add(f"tf.{class_path}.{name}", method, getattr(method, "__func__", method))
    return groups


def op_wrapper_codes() -> dict[object, str]:
    """Code object of each generated op wrapper -> its op type, read from tf.raw_ops."""
    codes = {}
    for op in dir(tf.raw_ops):
        target = tf_decorator.unwrap(getattr(tf.raw_ops, op))[1]
        if not op.startswith("_") and hasattr(target, "__code__"):
            codes[target.__code__] = op
    return codes


def _stateful(ops) -> bool:
    """TensorFlow never constant-folds a stateful op, even on constant inputs."""
    return any(getattr(op_def_registry.get(op), "is_stateful", False) for op in ops)


def _by_keyword(example, support) -> dict:
    """``{keyword: {value: unsupported ops}}`` for the values that make the call blocked."""
    specs, call, keyword, values = example
    blocked = {}
    for value in values:
        unsupported, _ = _classify(trace_ops(lambda *a: call(*a, **{keyword: value}), specs), support)
        if unsupported:
            blocked[value] = unsupported
    return {keyword: blocked} if blocked else {}


def _classify(ops: set[str], support) -> tuple[list[str], bool]:
    unsupported = sorted(op for op in ops if any(not support.has_op(d, op) for d in LOCAL_DEVICES))
    dynamic = any(op in DATA_DEPENDENT and op not in unsupported for op in ops)
    return unsupported, dynamic


def _from_examples(forms, support) -> dict:
    """Entry from hand-written call forms; the first form is the recorded one."""
    (specs, call), *others = forms
    ops = trace_ops(call, specs)
    verdict = _classify(ops, support)
    record = {"ops": sorted(ops), "how": "example"}
    if any(_classify(trace_ops(c, s), support) != verdict for s, c in others if len(s) > len(specs)):
        record["max_args"] = len(specs)
    return record


class Generator:
    """The records of the installed TensorFlow, one public function (all its names) at a time."""

    def __init__(self) -> None:
        self.support = load_support(tf.__version__)
        self.wrappers = op_wrapper_codes()
        self.examples = _examples()
        self.keyword_examples = _keyword_examples()
        self.counts = {"public_names": 0, "op_wrappers": 0, "examples": 0, "traced": 0, "untraced": 0,
                       "unsafe_skipped": 0}

    def record(self, obj, names: list[str]) -> dict | None:
        """The table's record of ``obj`` (known by ``names``); None when it is not written (nothing blocks or warns,
        or it cannot be called)."""
        counts = self.counts
        counts["public_names"] += len(names)
        target = tf_decorator.unwrap(obj)[1] if not inspect.isclass(obj) else obj
        named_example = next((self.examples[n] for n in names if n in self.examples), None)
        if getattr(target, "__code__", None) in self.wrappers:
            record = {"ops": [self.wrappers[target.__code__]], "how": "op"}
            counts["op_wrappers"] += 1
        elif named_example:
            record = _from_examples(named_example, self.support)
            counts["examples"] += 1
        elif any(UNSAFE.search(n) for n in names):
            counts["unsafe_skipped"] += 1
            return None
        else:
            traced = trace_by_profiles(obj)
            if traced is None:
                counts["untraced"] += 1
                return None
            record = {"ops": sorted(traced[0]), "how": f"traced ({traced[1]} forms)"}
            counts["traced"] += 1
        record["ops"] = [op for op in record["ops"] if op not in ALWAYS_COMPILED]
        unsupported, dynamic = _classify(set(record["ops"]), self.support)
        keyword_example = next((self.keyword_examples[n] for n in names if n in self.keyword_examples), None)
        by_keyword = _by_keyword(keyword_example, self.support) if keyword_example and not unsupported else {}
        if not (unsupported or dynamic or by_keyword):
            return None
        record.update(unsupported=unsupported, dynamic_shape=dynamic, stateful=_stateful(record["ops"]))
        if by_keyword:
            record["by_keyword"] = by_keyword
        return record


def build_table(log=print) -> dict:
    generator, groups = Generator(), public_callables()
    support = generator.support
    records: dict[str, dict] = {}
    started = time.time()
    for number, (obj, names) in enumerate(groups.values(), 1):
        record = generator.record(obj, names)
        for name in names if record else ():
            records[name] = record
        if number % 200 == 0:
            log(f"{number}/{len(groups)} functions, {time.time() - started:.0f} s")
    counts = {"public_names": generator.counts["public_names"], "functions": len(groups), **generator.counts}
    missing = sorted({op for r in records.values() for op in r["unsupported"]} | {
        op for r in records.values() for blocked in r.get("by_keyword", {}).values() for ops in blocked.values()
        for op in ops})
    return {
        "tensorflow": tf.__version__,
        "generated_by": "tools/gen_api_table.py (op wrappers by op name; other functions traced in a tf.function)",
        "counts": {**counts, "apis": len(records)},
        "no_kernel": {d: [op for op in missing if not support.has_op(d, op)] for d in LOCAL_DEVICES},
        "apis": dict(sorted(records.items())),
    }


def dumps(table: dict) -> str:
    """JSON with one API per line (small, and diffs stay readable)."""
    head = json.dumps({k: v for k, v in table.items() if k != "apis"}, indent=1)
    rows = ",\n".join(f"  {json.dumps(name)}: {json.dumps(record, separators=(',', ':'))}"
                      for name, record in table["apis"].items())
    return head[:-2] + ',\n "apis": {\n' + rows + "\n }\n}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent.parent / "xlalint" / "data" / f"static_api_tf{tf.__version__}.json"
    parser.add_argument("--out", default=str(default))
    args = parser.parse_args(argv)
    tf.get_logger().setLevel("ERROR")
    table = build_table(lambda line: print(line, file=sys.stderr))
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(dumps(table))
    print(f"{args.out}: {table['counts']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
