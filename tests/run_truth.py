"""Run scenario scripts for real, bounded, with XLA doing the real compile: the truth for `xlalint run`.

``python run_truth.py OUT.json DIR [--builds] NAME:ARG,ARG ...`` imports TensorFlow once, then runs each
script ``DIR/NAME.py`` with its arguments as ``__main__`` in a forked child working in ``DIR``,
and writes per script: whether it ended cleanly, where it failed (the exception type and message,
the compiler's op and node, the innermost line of DIR's files the compiler names, and the script's
line the traceback names), and how often it printed each ``tracing NAME`` line (Python in a
tf.function runs only while it traces); with ``--builds``, also how many executables XLA built
(TensorFlow's profiler counts them). A script named ``+NAME`` runs with auto-clustering allowed on
CPU (``--tf_xla_cpu_global_jit``; the script turns it on) and its outcome also holds ``graphs``:
the clusters TensorFlow marked in each graph it ran, ``[[node, op, cluster or None], ...]`` (its
``mark_for_compilation`` dumps).
"""

import collections
import contextlib
import glob
import io
import json
import os
import re
import runpy
import shutil
import signal
import socket
import sys
import traceback

import keras  # noqa: F401 - imported once, before the forks
import tensorflow as tf  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's xlalint
from xlalint.backend.op_stack import innermost_in  # noqa: E402

LIMIT_S = 90
_UNSUPPORTED = re.compile(r"on XLA_\w+_JIT: (?P<op>\w+) \(.*?\{\{node (?P<node>[^}]+)\}\}", re.S)


def _outcome(script: str, error: BaseException | None) -> dict:
    if error is None:
        return {"ok": True}
    name = os.path.basename(script)
    message = str(error)
    found = _UNSUPPORTED.search(message)
    compiler_at = innermost_in(message, os.path.dirname(script))  # the folder as its files' frames name it
    raised = [f.lineno for f in traceback.extract_tb(error.__traceback__) if os.path.basename(f.filename) == name]
    return {"ok": False, "type": type(error).__name__, "message": message[:500], "op": found and found["op"],
            "node": found and found["node"], "compiler_file": compiler_at[0] if compiler_at else None,
            "compiler_line": compiler_at[1] if compiler_at else None,
            "raised_line": raised[-1] if raised else None}


def _clusters(dump: str) -> list:
    from google.protobuf import text_format
    from tensorflow.core.framework import graph_pb2

    graphs = []
    for path in sorted(glob.glob(os.path.join(dump, "mark_for_compilation*.pbtxt"))):
        if "annotated" not in path:
            with open(path) as handle:
                graph = text_format.Parse(handle.read(), graph_pb2.GraphDef())
            graphs.append([[n.name, n.op, n.attr["_XlaCluster"].s.decode() if "_XlaCluster" in n.attr else None]
                           for n in graph.node])
    return graphs


def _run(script: str, args: list[str], out: str, builds: bool, dump: str | None) -> None:
    socket.setdefaulttimeout(10)
    signal.alarm(LIMIT_S)
    if dump:  # read by TensorFlow when it first clusters a graph, after the fork
        os.environ.update(TF_XLA_FLAGS="--tf_xla_cpu_global_jit --tf_xla_clustering_debug", TF_DUMP_GRAPH_PREFIX=dump)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(script))
    error = None
    printed = io.StringIO()
    counted, builds_counted = contextlib.nullcontext({"count": None}), False
    if builds:  # xlalint's own count
        from xlalint.backend.verify.compare import compilations, counts_executables
        counted, builds_counted = compilations("CPU"), counts_executables("CPU")
    try:
        with counted as built, contextlib.redirect_stdout(printed):
            runpy.run_path(script, run_name="__main__")
    except BaseException as caught:  # noqa: BLE001 - the script's failure is the answer
        error = caught
    traced = collections.Counter(line.split()[1] for line in printed.getvalue().splitlines()
                                 if line.startswith("tracing "))
    with open(out, "w") as handle:
        json.dump({**_outcome(script, error), "traced": traced, "xla_builds": built["count"],
                   "builds_counted": builds_counted,
                   **({"graphs": _clusters(dump)} if dump else {})}, handle)


def main(out: str, folder: str, scenarios: list[str]) -> None:
    builds = scenarios[:1] == ["--builds"]
    scenarios = scenarios[builds:]
    os.chdir(folder)
    results = {}
    for scenario in scenarios:
        name, _, args = scenario.partition(":")
        dump = None
        if name.startswith("+"):
            name = name[1:]
            dump = os.path.join(folder, f".truth-{name}-dumps")
            os.makedirs(dump)
        part = os.path.join(folder, f".truth-{name}.json")
        pid = os.fork()
        if pid == 0:
            try:
                _run(os.path.join(folder, f"{name}.py"), args.split(",") if args else [], part, builds, dump)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if dump:
            shutil.rmtree(dump)
        with open(part) as handle:
            results[name] = json.load(handle)
        os.unlink(part)
    with open(out, "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
