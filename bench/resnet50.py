"""Speed and memory of xlalint on a Keras ResNet50, against asking XLA to lower the same function.

    python bench/resnet50.py                       # forward pass and training step, batch 8
    python bench/resnet50.py --only train --batch 4

Each case is written as a user file (a module-level ``keras.applications.ResNet50(weights=None)``
and a ``@tf.function(input_signature=...)`` entry), then measured in this run:

1. xlalint: ``python -m xlalint FILE --format json --no-cache --device gpu`` (wall, CPU, peak RSS of
   parent + worker). Discovery finds two entries in the file: the module-level model (forward
   pass) and the tf.function; the tf.function calls the model, so only it is traced (the model is
   checked as part of it), as for any user.
2. Where its time goes: the same file again through ``xlalint.tracing.workers.run_worker`` and the
   analysis pieces of ``xlalint.engine.analysis`` in this process (worker timings: import, trace, export).
3. The baseline, what a user does today: a fresh process imports TensorFlow, imports the module
   (builds the model) and runs ``tf.function(f, jit_compile=True).experimental_get_compiler_ir(
   *args)(stage="hlo")`` on the tf.function only (bench/_harness.py).

Targets (issue 37): linting takes at most 0.5x the time of one lowering (the median of ``--repeat``
runs of each side, run alternately); the analysis after tracing (graph
export, transfer, op graph, rules, source map, report) costs at most 5% of the trace. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from _harness import lower_command, measure, ratio, xlalint_command

HEADER = '''import keras
import tensorflow as tf

model = keras.applications.ResNet50(weights=None, input_shape=({size}, {size}, 3))
'''
CASES = {
    "forward": ("forward", HEADER + '''

@tf.function(input_signature=[tf.TensorSpec([{batch}, {size}, {size}, 3], tf.float32)])
def forward(images):
    return model(images, training=False)
'''),
    "train": ("train_step", HEADER + '''optimizer = keras.optimizers.SGD(0.01, momentum=0.9)


@tf.function(input_signature=[tf.TensorSpec([{batch}, {size}, {size}, 3], tf.float32), tf.TensorSpec([{batch}], tf.int32)])
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
'''),
}


def breakdown(path: str, device: str) -> dict:
    """Seconds per stage of one xlalint run on ``path``, measured from this process."""
    from xlalint.core.gc_pause import gc_paused
    from xlalint.engine.analysis import file_findings, source_findings
    from xlalint.report import EMITTERS
    from xlalint.core.results import Report
    from xlalint.engine.selection import Produced, select
    from xlalint.settings.table import Options
    from xlalint.core.support import load_support
    from xlalint.source.suppressions import SuppressionIndex
    from xlalint.tracing.workers import run_worker

    options = Options(device=device)
    ready: list[float] = []
    started = time.perf_counter()
    traced = run_worker([{"path": path, "targets": [], "discover": True, "verify": None}], options.timeout,
                        progress=lambda _: ready.append(time.perf_counter()))
    worker_wall = time.perf_counter() - started
    result = traced.files[path]
    entries = [e for e in result["entries"] if e["graph"]]
    out = {"startup": (ready[0] - started) if ready else worker_wall, "entries": entries,
           "trace": sum(e["timing"]["trace_s"] for e in entries),
           "export": sum(e["timing"]["export_s"] for e in entries)}
    out["module"] = result["seconds"] - out["trace"] - out["export"]
    out["transfer"] = worker_wall - out["startup"] - result["seconds"]

    clock = time.perf_counter()
    support = load_support(traced.tensorflow)
    out["tables"] = time.perf_counter() - clock
    clock = time.perf_counter()
    report = Report(device=device, tensorflow=traced.tensorflow)
    with gc_paused():  # as the run's analysis does: this process's TensorFlow heap would be walked otherwise
        produced = file_findings(report, result, support, options, True)
    out["rules"] = time.perf_counter() - clock
    clock = time.perf_counter()
    produced += map(Produced, source_findings(path, options, result["entries"], tuple(p.finding for p in produced)))
    out["source"] = time.perf_counter() - clock
    clock = time.perf_counter()
    report.findings = select(report, produced, options, SuppressionIndex(), [path])
    EMITTERS["json"](report)
    out["report"] = time.perf_counter() - clock
    out["analysis"] = sum(out[k] for k in ("export", "transfer", "tables", "rules", "source", "report"))
    return out


def _median(runs: list[dict]) -> dict:
    """The run of median wall time (the lower middle one of an even count), with every run's wall times."""
    ordered = sorted(runs, key=lambda run: run["wall_s"])
    return dict(ordered[(len(ordered) - 1) // 2], walls=[run["wall_s"] for run in runs])


def run_case(key: str, batch: int, size: int, device: str, directory: Path, repeat: int) -> dict:
    entry, template = CASES[key]
    path = directory / f"resnet50_{key}.py"
    path.write_text(template.format(batch=batch, size=size), encoding="utf-8")
    lints, lowers = [], []
    for _ in range(repeat):  # alternately, so that both sides see the same load
        lints.append(measure(xlalint_command([str(path)], "--no-cache", "--device", device)))
        lowers.append(measure(lower_command([f"{path}::{entry}"])))
    lint, lower = _median(lints), _median(lowers)
    parts = breakdown(str(path), device)
    return {"key": key, "entry": entry, "lint": lint, "parts": parts, "lower": lower,
            "report": json.loads(lint["stdout"] or "{}"), "lowered": json.loads(lower["stdout"] or "{}")}


def show(case: dict, batch: int) -> None:
    lint, lower, parts, report = case["lint"], case["lower"], case["parts"], case["report"]
    lowered = case["lowered"]["files"][0] if case["lowered"].get("files") else {"entries": [], "module_s": 0.0}
    missing = {"trace_s": 0.0, "lower_s": 0.0, "error": lower["stderr"][-300:]}
    low = lowered["entries"][0] if lowered["entries"] else missing
    names = ", ".join(e["name"] for e in parts["entries"])
    print(f"\n== ResNet50 {case['key']} (batch {batch}): xlalint lints the file ({names}); "
          f"XLA lowers `{case['entry']}`")
    if len(lint["walls"]) > 1:
        walls = [" ".join(f"{w:.1f}" for w in side["walls"]) for side in (lint, lower)]
        print(f"  median of {len(lint['walls'])} runs each; wall times: xlalint {walls[0]}, lowering {walls[1]}")
    print(f"{'':34}{'xlalint':>12}{'lowering':>12}{'ratio':>9}")
    for label, key, fmt in (("wall time", "wall_s", "{:.1f} s"), ("CPU time (user+sys)", "cpu_s", "{:.1f} s"),
                            ("peak RSS, process tree (sampled)", "peak_mb", "{:,.0f} MB"),
                            ("largest process RSS (ru_maxrss)", "max_proc_mb", "{:,.0f} MB")):
        print(f"{label:34}{fmt.format(lint[key]):>12}{fmt.format(lower[key]):>12}{ratio(lint[key], lower[key]):>9}")

    lowering_hlo = low["lower_s"] - low.get("trace_s", 0.0)
    rows = (("process start + TF import", parts["startup"], case["lowered"].get("import_s")),
            ("module import + model build", parts["module"], lowered["module_s"]),
            (f"trace ({len(parts['entries'])} entries | 1)", parts["trace"], low.get("trace_s")),
            ("graph export | HLO lowering", parts["export"], lowering_hlo),
            ("worker -> parent transfer", parts["transfer"], None),
            ("support tables", parts["tables"], None),
            ("op graph, graph rules, source map", parts["rules"], None),
            ("source rules (libcst)", parts["source"], None),
            ("report (selection, suppressions, JSON)", parts["report"], None))
    print(f"\n  where the time goes (xlalint: second run via run_worker + analyze pieces)")
    for label, ours, theirs in rows:
        print(f"  {label:40}{ours:9.2f} s" + (f"{theirs:9.2f} s" if theirs is not None else ""))
    share = parts["analysis"] / parts["trace"] if parts["trace"] else float("inf")
    print(f"  {'analysis after tracing':40}{parts['analysis']:9.2f} s  = {share:.0%} of the trace")

    print("\n  op counts:", "; ".join(f"xlalint graph `{e['name']}` {len(e['graph']['nodes']):,} ops in "
                                     f"{len(e['graph']['functions'])} functions" for e in parts["entries"])
          + f"; HLO of `{case['entry']}`: " + (f"{low['hlo_instructions']:,} instructions"
                                              if low.get("hlo_instructions") else f"none ({low.get('error')})"))
    verdicts = ", ".join(f"{e['name']} {e['verdict']}" for e in report.get("entries", []))
    codes = sorted({f["code"] for f in report.get("findings", [])})
    print(f"  verdicts: xlalint {verdicts or lint['stderr'][-300:]} (findings: {', '.join(codes) or 'none'}); "
          f"XLA {'lowered it' if not low.get('error') else 'failed: ' + str(low['error'])}")
    faster = lint["wall_s"] <= 0.5 * lower["wall_s"]
    print(f"  target: lint <= 0.5x one lowering: {'HOLDS' if faster else 'FAILS'} "
          f"({lint['wall_s']:.1f} s vs {lower['wall_s']:.1f} s, {ratio(lint['wall_s'], lower['wall_s'])})")
    print(f"  target: analysis after tracing <= 5% of trace: {'HOLDS' if share <= 0.05 else 'FAILS'} ({share:.0%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=224, help="image height and width (default: 224)")
    parser.add_argument("--only", choices=list(CASES), help="one case (default: both)")
    parser.add_argument("--device", default="gpu", help="xlalint's target device (default: gpu)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternately; the median counts")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="xlalint-bench-") as tmp:
        for key in [args.only] if args.only else list(CASES):
            show(run_case(key, args.batch, args.size, args.device, Path(tmp), args.repeat), args.batch)


if __name__ == "__main__":
    main()
