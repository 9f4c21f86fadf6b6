"""Speed of xlalint over the rule examples and fixtures, against lowering every entry with XLA.

    python bench/corpus_speed.py

Files: every ``.py`` under ``rules/`` and ``fixtures/*.py``, in one invocation each time:

1. ``python -m xlalint rules fixtures/*.py --format json --device cpu --no-cache --jobs 1``
2. the same with ``--jobs 2``
3. a cache run: ``--cache-dir TMP`` twice; the first fills the cache, the second hits it
4. the baseline: one process imports TensorFlow once and, for each file, imports it and runs
   ``tf.function(f, jit_compile=True).experimental_get_compiler_ir(*args)(stage="hlo")`` on every
   entry xlalint's discovery finds (bench/_harness.py).

``--device cpu`` because the baseline lowers for XLA's CPU backend. Prints wall time, CPU time
(every process waited for), peak RSS of the process tree, and ratios. A report, not a test.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path

from _harness import REPO, lower_command, measure, ratio, xlalint_command


def _summary(report: dict) -> tuple:
    """What a run found, to check that parallel and cached runs say the same."""
    return (sorted((e["path"], e["name"], e["verdict"]) for e in report.get("entries", [])),
            sorted((f["path"], f["line"], f["code"]) for f in report.get("findings", [])))


def main() -> None:
    files = sorted(str(p.relative_to(REPO)) for p in (REPO / "rules").rglob("*.py"))
    files += sorted(str(p.relative_to(REPO)) for p in (REPO / "fixtures").glob("*.py"))
    paths = ["rules", *(f for f in files if f.startswith("fixtures"))]
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    runs = {}
    runs["xlalint --jobs 1"] = measure(xlalint_command(paths, "--device", "cpu", "--no-cache", "--jobs", "1"))
    runs["xlalint --jobs 2"] = measure(xlalint_command(paths, "--device", "cpu", "--no-cache", "--jobs", "2"))
    with tempfile.TemporaryDirectory(prefix="xlalint-cache-") as cache:
        for label in ("xlalint cache fill", "xlalint cache hit"):
            runs[label] = measure(xlalint_command(paths, "--device", "cpu", "--cache-dir", cache))
        # The cache holds the worker's own messages: its timings of the fill run, for free.
        worker = [json.loads(p.read_text())["result"] for p in Path(cache).glob("*.json")]
    lower = runs["XLA lowering, 1 process"] = measure(lower_command(files))

    reports = {label: json.loads(run["stdout"] or "{}") for label, run in runs.items() if label.startswith("xlalint")}
    first = reports["xlalint --jobs 1"]
    verdicts = Counter(e["verdict"] for e in first.get("entries", []))
    lowered = json.loads(lower["stdout"] or "{}")
    entries = [e for f in lowered.get("files", []) for e in f["entries"]]
    failed = sum(1 for e in entries if e["error"])
    print(f"{len(files)} files (rules/ and fixtures/*.py); xlalint: "
          f"{len(first.get('entries', []))} entries ({dict(verdicts)}), {len(first.get('errors', []))} file errors; "
          f"lowering: {len(entries)} entries ({len(entries) - failed} lowered, {failed} refused by XLA)")
    print(f"\n{'run':26}{'wall':>8}{'CPU':>8}{'peak RSS':>11}  {'wall, CPU vs lowering':>22}{'wall vs jobs 1':>16}"
          "  same result")
    base = runs["xlalint --jobs 1"]["wall_s"]
    for label, run in runs.items():
        same = "" if label not in reports else ("yes" if _summary(reports[label]) == _summary(first) else "NO")
        versus = f"{ratio(run['wall_s'], lower['wall_s'])}, {ratio(run['cpu_s'], lower['cpu_s'])}"
        print(f"{label:26}{run['wall_s']:7.1f}s{run['cpu_s']:7.1f}s{run['peak_mb']:8,.0f} MB  {versus:>22}"
              f"{ratio(run['wall_s'], base):>16}  {same}")
    if lowered:
        modules = sum(f["module_s"] for f in lowered["files"])
        lowering = sum(e["lower_s"] for e in entries)
        print(f"\nlowering process: TF import {lowered['import_s']:.1f} s, module imports {modules:.1f} s, "
              f"trace + HLO {lowering:.1f} s ({lowering / max(1, len(entries)):.2f} s per entry)")
    timed = [e["timing"] for r in worker for e in r["entries"] if e.get("timing")]
    trace, export = sum(t["trace_s"] for t in timed), sum(t["export_s"] for t in timed)
    module = sum(r["seconds"] for r in worker) - trace - export
    print(f"xlalint worker (cache fill run, {len(worker)} files): module imports + discovery {module:.1f} s, "
          f"trace {trace:.1f} s, graph export {export:.1f} s ({ratio(export, trace)} the trace), {len(timed)} entries")
    n = len(first.get("entries", [])) or 1
    print(f"xlalint --jobs 1: {base / n:.2f} s per entry, all included; "
          f"cache hit: {runs['xlalint cache hit']['wall_s']:.1f} s for the whole corpus")


if __name__ == "__main__":
    main()
