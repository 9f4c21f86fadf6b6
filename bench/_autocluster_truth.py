"""TensorFlow's own auto-clusters against ``predict_clusters``, entry by entry (CPU).

Shared by ``bench/agreement.py --autocluster`` and ``tests/test_autocluster.py``:

    python bench/_autocluster_truth.py FILE.py ...   # the table for any files

Every ``tf.function`` with an ``input_signature`` runs once, in a fresh process, under
``TF_XLA_FLAGS="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_clustering_debug"``
with ``TF_DUMP_GRAPH_PREFIX`` set; the clusters TensorFlow marked are the ``_XlaCluster``
attrs of the ``mark_for_compilation*.pbtxt`` dumps. xlalint predicts from the same
entries traced by the real command line (``--save-graphs``).

Matching (docs/autocluster.md): TensorFlow's names are normalised (Grappler's
``ArithmeticOptimizer/<Rewrite>_`` prefix and ``/unary_ops_composition`` suffix
dropped, lowered bodies' ``/body/_N/`` counters removed) and compared with the
prediction's qualified names. Only ops that do work and exist on both sides are
compared: constants and identities are cloned, folded and removed by TensorFlow's
passes, and ops Grappler absorbed into another one (a unary composition, a
rewrite) have no node left in the dump.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from xlalint.autocluster import flattened_ops, predict_clusters
from xlalint.core.opgraph import OpGraph
from xlalint.core.support import load_support

REPO = Path(__file__).resolve().parent.parent

GROUND_TRUTH = r'''
import glob, importlib.util, json, os, sys
import numpy as np
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.framework import graph_pb2

dump, files = sys.argv[1], sys.argv[2:]
for path in files:
    print(json.dumps({"file": path}), flush=True)
    spec = importlib.util.spec_from_file_location("fixture_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, fn in vars(module).items():
        if not (isinstance(fn, tf.types.experimental.GenericFunction) and fn.input_signature):
            continue
        args = []
        for s in tf.nest.flatten(fn.input_signature):
            shape = [4 if d is None else d for d in s.shape.as_list()] if s.shape.rank is not None else [4]
            values = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
            if s.dtype == tf.string:
                args.append(tf.fill(shape, "text"))
            elif s.dtype == tf.bool:
                args.append(tf.constant(values > 0))
            elif s.dtype.is_integer:
                args.append(tf.constant(np.abs(values * 2).round(), s.dtype))
            else:
                args.append(tf.constant(values, s.dtype))
        before = set(glob.glob(os.path.join(dump, "mark_for_compilation*.pbtxt")))
        raised = None
        try:
            fn(*args)
        except Exception as error:  # clustering happened before the failure (a compile or runtime error)
            raised = f"{type(error).__name__}: {error}"[:2000]
        graphs = []
        for f in sorted(set(glob.glob(os.path.join(dump, "mark_for_compilation*.pbtxt"))) - before):
            if "annotated" in f:
                continue
            g = text_format.Parse(open(f).read(), graph_pb2.GraphDef())
            graphs.append([[n.name, n.op, n.attr["_XlaCluster"].s.decode() if "_XlaCluster" in n.attr else None]
                           for n in g.node])
        print(json.dumps({"entry": os.path.relpath(path) + "::" + name, "graphs": graphs, "raised": raised}),
              flush=True)
'''

NOT_COMPARED = frozenset({"Placeholder", "Const", "HostConst", "Identity", "IdentityN", "NoOp",
                          "While", "StatelessWhile", "If", "StatelessIf", "Case", "StatelessCase"})
# TensorFlow nodes that are not user ops: arguments, results, constants, Switch/Merge lowering.
LOWERING_AND_BOOKKEEPING = frozenset({"_Arg", "_Retval", "_DeviceArg", "_DeviceRetval", "Const", "Identity",
                                      "NoOp", "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond"})


def normalize(name: str) -> str:
    """TensorFlow's post-Grappler node name -> the name xlalint gives the op."""
    name = re.sub(r"(^|/)ArithmeticOptimizer/[A-Za-z0-9]+_", r"\1", name)
    name = re.sub(r"/unary_ops_composition$", "", name)
    return re.sub(r"/(body|cond|then|else)/_\d+/", r"/\1/", name)


def compare(graph: OpGraph, predicted: dict, dumps: list) -> dict:
    ops = flattened_ops(graph)
    compared = {n for n, node_id in ops.items() if graph.node(node_id)["type"] not in NOT_COMPARED}

    def overlap(dump):
        return len(compared & {normalize(n) for n, _, _ in dump})

    dump = max(dumps, key=overlap, default=[])  # the entry's own graph (a call may dump others too)
    actual = {normalize(n): (op, c) for n, op, c in dump if op not in LOWERING_AND_BOOKKEEPING}
    universe = compared & set(actual)
    pred_of = {n: i for i, c in enumerate(predicted["clusters"]) for n in c}
    pred_groups = {frozenset(n for n in c if n in universe) for c in predicted["clusters"]} - {frozenset()}
    actual_groups: dict[str, set] = {}
    for n in universe:
        if actual[n][1]:
            actual_groups.setdefault(actual[n][1], set()).add(n)
    p = {n for n in universe if n in pred_of}
    a = {n for n in universe if actual[n][1]}
    return {
        "predicted": len(predicted["clusters"]),
        "actual": len({c for _, _, c in dump if c}),
        "jaccard": len(p & a) / len(p | a) if p | a else 1.0,
        "same_partition": pred_groups == {frozenset(g) for g in actual_groups.values()},
        "compared": len(universe),
        "absorbed": len(compared - set(actual)),  # predicted ops with no node left in the dump
        "new": len(set(actual) - compared),  # dump ops xlalint has no name for (Grappler rewrites)
        "missed": sorted(a - p), "extra": sorted(p - a),
    }


def measure(files: list[str], workdir: Path) -> dict:
    """``{"file::entry": comparison}`` for every tf.function with an input_signature in ``files``
    (paths relative to the repository), TensorFlow's clusters against xlalint's prediction;
    ``raised`` is the error the call raised under auto-clustering, or None."""
    saved = workdir / "graphs"
    truth, pending, crashed = {}, list(files), []
    while pending:  # a file that kills the process is skipped, and the run goes on after it
        # A fresh directory per process: TensorFlow numbers its dumps per process and would overwrite.
        dump = workdir / f"tf_dumps_{len(crashed)}"
        dump.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_clustering_debug",
               "TF_DUMP_GRAPH_PREFIX": str(dump), "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
        done = subprocess.run([sys.executable, "-c", GROUND_TRUTH, str(dump), *pending], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=900)
        started = []
        for line in done.stdout.splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                if "file" in record:
                    started.append(record["file"])
                else:
                    truth[record["entry"]] = record
        if done.returncode == 0:
            break
        if not started:
            raise RuntimeError(f"TensorFlow could not start: {done.stderr[-3000:]}")
        crashed.append(started[-1])
        pending = pending[pending.index(started[-1]) + 1:]
    files = [f for f in files if f not in crashed]
    if crashed:
        print(f"TensorFlow crashed on {', '.join(crashed)}: skipped", file=sys.stderr)
    traced = subprocess.run([sys.executable, "-m", "xlalint", *files, "--device", "cpu", "--save-graphs", str(saved),
                             "--no-cache", "-q"], cwd=REPO, capture_output=True, text=True, timeout=900)
    if traced.returncode not in (0, 1):
        raise RuntimeError(f"xlalint failed: {traced.stderr[-3000:]}")
    rows = {}
    for path in sorted(saved.glob("*.json")):
        raw = json.loads(path.read_text())
        key = f"{raw['path']}::{raw['name']}"
        if key in truth:  # xlalint also traces Keras models etc.; TensorFlow ran only tf.functions
            graph = OpGraph(raw["graph"])
            predicted = predict_clusters(graph, load_support(raw["tensorflow"]), "cpu")
            rows[key] = {**compare(graph, predicted, truth[key]["graphs"]), "raised": truth[key]["raised"]}
    return rows


def format_table(rows: dict) -> str:
    width = max([len(key.removeprefix("fixtures/autocluster/")) for key in rows] + [5])
    lines = [f"{'entry':{width}} {'pred':>4} {'tf':>4} {'jaccard':>7} {'same':>5} {'cmp':>4} {'abs':>4} {'new':>4}"]
    for key, r in rows.items():
        lines.append(f"{key.removeprefix('fixtures/autocluster/'):{width}} {r['predicted']:>4} {r['actual']:>4} "
                     f"{r['jaccard']:>7.2f} {'yes' if r['same_partition'] else 'NO':>5} {r['compared']:>4} "
                     f"{r['absorbed']:>4} {r['new']:>4}")
        if r["missed"] or r["extra"]:
            lines.append(f"    missed (TF clusters, xlalint does not): {r['missed']}; extra: {r['extra']}")
    lines.append("pred/tf: clusters; jaccard/same: clustered ops and their grouping, over the cmp ops found on "
                 "both sides; abs: predicted ops with no node left after Grappler; new: TF ops xlalint cannot name")
    return "\n".join(lines)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(format_table(measure([os.path.relpath(os.path.abspath(f), REPO) for f in sys.argv[1:]], Path(tmp))))
