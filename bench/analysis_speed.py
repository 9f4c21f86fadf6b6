"""The analysis after the trace, piece by piece, against an older commit measured in the same run.

    python bench/analysis_speed.py [--before REV] [--repeat N] [--size 64] [--batch 8]

The file is bench/resnet50.py's training-step case (a module-level Keras ResNet50 and a
``tf.function`` train step). For each side (``REV``, default ``main``, checked out in a temporary
worktree, and this checkout) a child process with that side's xlalint installs the Keras layer
hooks, checks the file as the worker does (``check_file``: import, discovery, trace, export), then
times each piece after the trace in CPU seconds, the median of ``--repeat`` runs:

    export   ``graph_export.export_graph`` of every traced entry (in the tracing process)
    write    the worker's writing of the file's result (``result_file``; JSON on older sides)
    load     reading that file back as the client does
    rules    ``engine.file_findings``: op graph, graph rules, source map, entry rules, XLA mode
    source   ``engine.source_findings``: the libcst pass
    report   selection and the JSON report

Left out: the child's exit and the server's wait for it (``bench/resnet50.py`` counts them in its
"transfer"), and the support tables (loaded once per run). The last line sets the total against the
trace of the same run, whose goal is 5% at most. A report, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PIECES = ("export", "write", "load", "rules", "source", "report")


def _cpu(repeat: int, work) -> float:
    """Median CPU seconds of ``work()`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _transfer(request: dict, worker):
    """``(write(result), load())`` of the result file as this side's worker and client do it."""
    try:
        from xlalint.process.result_file import read_result, write_result
    except ImportError:  # a side before the marshal result file: JSON
        from xlalint.core.gc_pause import gc_paused

        def load():
            with open(request["result"], encoding="utf-8") as handle, gc_paused():
                return json.load(handle)

        return lambda result: worker._write_result(request, result), load  # noqa: SLF001
    return lambda result: write_result(request["result"], result), lambda: read_result(request["result"])


def child(path: str, repeat: int, device: str) -> dict:
    """Check ``path`` with the xlalint on ``sys.path``, then time each piece after the trace."""
    from xlalint.backend.keras_sites import LayerRecorder

    recorder = LayerRecorder()
    recorder.install()  # before Keras builds any layer, as in the worker
    import xlalint.backend.graph_export as graph_export
    from xlalint.backend import worker
    from xlalint.engine.analysis import file_findings, source_findings
    from xlalint.report import EMITTERS
    from xlalint.core.results import Report
    from xlalint.engine.selection import Produced, select
    from xlalint.settings.table import Options
    from xlalint.core.support import load_support
    from xlalint.source.suppressions import SuppressionIndex

    exported: list[tuple] = []  # the export's arguments, to time it again
    export = graph_export.export_graph

    def recording_export(*args):
        exported.append(args)
        return export(*args)

    graph_export.export_graph = recording_export
    scratch = tempfile.mkdtemp(prefix="xlalint-bench-")
    request = {"path": path, "targets": [], "discover": True, "verify": None,
               "result": os.path.join(scratch, "result"), "log": os.path.join(scratch, "log")}
    result = worker.check_file(request, recorder)
    graph_export.export_graph = export
    tensorflow = __import__("tensorflow").__version__
    options, support = Options(device=device), load_support(tensorflow)

    write, load = _transfer(request, worker)

    def findings(report):
        produced = file_findings(report, load(), support, options, True)
        return produced + list(map(Produced, source_findings(path, options, result["entries"])))

    def select_and_emit(report, produced):
        started = time.process_time()
        report.findings = select(report, produced, options, SuppressionIndex(), [path])
        text = EMITTERS["json"](report)
        return time.process_time() - started, text

    out = {"export": _cpu(repeat, lambda: [export(*args) for args in exported]),
           "write": _cpu(repeat, lambda: write(result)),
           "load": _cpu(repeat, load)}
    loaded = load()
    out["rules"] = _cpu(repeat, lambda: file_findings(Report(device=device, tensorflow=tensorflow), loaded, support,
                                                      options, True))
    out["source"] = _cpu(repeat, lambda: source_findings(path, options, result["entries"]))
    reports = [Report(device=device, tensorflow=tensorflow) for _ in range(repeat)]
    emitted = [select_and_emit(report, findings(report)) for report in reports]
    out["report"] = statistics.median(seconds for seconds, _ in emitted)
    entries = [e for e in result["entries"] if e.get("graph")]
    out["trace"] = sum(e["timing"]["trace_s"] for e in entries)
    out["ops"] = sum(len(e["graph"]["nodes"]) for e in entries)
    out["bytes"] = os.path.getsize(request["result"])
    out["findings"] = json.loads(emitted[-1][1])["findings"]
    return out


def _run_side(folder: Path, path: str, repeat: int, device: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(folder), TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, __file__, "child", path, str(repeat), device], cwd=folder, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the child of {folder} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    from _harness import checkouts, ratio
    from resnet50 import CASES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the commit to compare with (default: main)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each piece; the median counts (default: 3)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=64, help="image height and width (default: 64)")
    parser.add_argument("--device", default="cpu", help="xlalint's target device (default: cpu)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="xlalint-bench-") as tmp, checkouts([args.before]) as sides:
        path = str(Path(tmp) / "resnet50_train.py")
        Path(path).write_text(CASES["train"][1].format(batch=args.batch, size=args.size), encoding="utf-8")
        result = {side: _run_side(folder, path, args.repeat, args.device) for side, folder in sides.items()}
    before, after = result[args.before], result["this checkout"]
    print(f"ResNet50 training step (batch {args.batch}, {args.size}x{args.size}): {after['ops']:,} ops, "
          f"result {after['bytes'] / 1e6:.1f} MB ({before['bytes'] / 1e6:.1f} MB before); CPU s, median of {args.repeat}")
    print(f"  {'':10}{args.before:>14}{'this checkout':>16}{'ratio':>9}")
    for piece in (*PIECES, "total"):
        old = sum(before[p] for p in PIECES) if piece == "total" else before[piece]
        new = sum(after[p] for p in PIECES) if piece == "total" else after[piece]
        print(f"  {piece:10}{old:12.3f} s{new:14.3f} s{ratio(new, old):>9}")
    for side, figures in ((args.before, before), ("this checkout", after)):
        total = sum(figures[p] for p in PIECES)
        print(f"  {side}: analysis {total:.2f} s = {total / figures['trace']:.1%} of its trace ({figures['trace']:.1f} s)")
    print(f"  same findings: {'yes' if before['findings'] == after['findings'] else 'NO'}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        protocol, sys.stdout = sys.stdout, sys.stderr  # the module's prints must not mix with the JSON
        with contextlib.redirect_stdout(sys.stderr):
            figures = child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        protocol.write(json.dumps(figures) + "\n")
    else:
        main()
