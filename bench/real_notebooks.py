"""The check command over a folder of real notebooks, as a user runs it: speed, memory, and what became of each.

    python bench/real_notebooks.py PATH [--jobs 1,2] [--timeout SECONDS] [--device DEVICE]

For each ``--jobs`` it runs ``python -m xlalint PATH --format json --no-cache --jobs J`` (cold: no result
cache) and prints wall and CPU time (every process the command waited for), the sampled peak memory of
the whole process tree, the cost per file, the slowest files (the progress lines' seconds), the load
average, and the ``--jobs`` speedup. It sorts every ``.ipynb`` under PATH by what the JSON report says of
it: checked (its entries' verdicts), no entry found, not checked and why (the network, a missing package
and which, a syntax error, an exception of the notebook's own code, a timeout, the memory limit, a
crashed child), or not collected (no TensorFlow in it). Before and after each run it hashes every file
and folder of PATH (content and mode) and prints any difference: xlalint must leave the tree as it was.

Written for a checkout of TensorFlow's public docs repository (``site/en``, or ``site/en/tutorials``):
notebooks that download data (this bench never does, and xlalint refuses the network to the code it
runs), import optional packages and train at top level. A report, not a test: it never fails.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import stat
import sys
from pathlib import Path

from _harness import measure

PROGRESS = re.compile(r"^\[\d+/\d+\] (?P<path>.+) (?P<seconds>[\d.]+) s$", re.MULTILINE)
RAISED = re.compile(r"importing the module raised (?P<kind>[\w.]+)")
MISSING = re.compile(r"No module named '(?P<name>[\w.]+)'")
ADDRESS = re.compile(r"0x[0-9a-f]+")
# (category, what its message says), the first that matches names the outcome
KINDS = [("network", "reaches for the network"), ("timeout", "timed out after"),
         ("memory limit", "exceeded the memory limit"), ("syntax error", "syntax error"),
         ("child crashed", "the traced module exited with code"), ("child crashed", "the traced module was killed"),
         ("no entry found", "no entry point found")]


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """``{relative path: (mode, SHA-256 of the content)}`` of every file, folder and link under ``root``."""
    found = {}
    for folder, names, files in os.walk(root):
        for name in names + files:
            path = Path(folder, name)
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(info.st_mode) else ""
            found[str(path.relative_to(root))] = (oct(info.st_mode), digest)
    return found


def differences(before: dict, after: dict) -> list[str]:
    return ([f"added {p}" for p in sorted(after.keys() - before.keys())]
            + [f"removed {p}" for p in sorted(before.keys() - after.keys())]
            + [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]])


def outcome(error: dict | None, verdicts: list[str], collected: bool) -> str:
    """One notebook's category, from its error (if any), its entries' verdicts and whether the run checked it."""
    if error is None:
        return "checked" if verdicts else "no entry found" if collected else "not collected"
    message = error["message"]
    for category, text in KINDS:
        if text in message:
            return category
    if MISSING.search(message):
        return "missing package"
    raised = RAISED.search(message)
    return f"raised {raised['kind']}" if raised else "other: " + message[:80]


def classify(root: Path, report: dict, collected: set[str]) -> dict[str, dict]:
    """Per notebook under ``root`` (its path as the report shows it): category, verdicts, error, findings;
    ``collected``: the paths the run's progress lines named (a directory run notes no file without entries)."""
    shown = {os.path.abspath(p): p for p in {e["path"] for e in report["entries"] + report["errors"]}
             | {f["path"] for f in report["findings"]}}
    out = {}
    for path in sorted(root.rglob("*.ipynb")):
        name = shown.get(str(path.resolve()), str(path))
        error = next((e for e in report["errors"] if e["path"] == name), None)
        verdicts = [e["verdict"] for e in report["entries"] if e["path"] == name]
        findings = [f["code"] for f in report["findings"] if f["path"] == name]
        out[name] = {"category": outcome(error, verdicts, name in collected), "verdicts": verdicts,
                     "findings": findings, "error": error["message"] if error else None}
    return out


def print_outcomes(notebooks: dict[str, dict]) -> None:
    categories = collections.Counter(n["category"] for n in notebooks.values())
    print(f"  {len(notebooks)} notebooks:")
    for category, count in categories.most_common():
        print(f"    {count:4}  {category}")
    verdicts = collections.Counter(v for n in notebooks.values() for v in n["verdicts"])
    findings = collections.Counter(c for n in notebooks.values() for c in n["findings"])
    print(f"  entries by verdict: {dict(verdicts) or 'none'}; "
          f"findings by code: {dict(findings.most_common()) or 'none'}")
    missing = collections.Counter(m["name"].split(".")[0] for n in notebooks.values() if n["error"]
                                  for m in [MISSING.search(n["error"])] if m)
    if missing:
        print(f"  missing packages: {', '.join(f'{name} {count}' for name, count in missing.most_common())}")


def run_once(root: Path, jobs: int, extra: list[str]) -> dict:
    before = snapshot(root)
    load = os.getloadavg()[0]
    command = [sys.executable, "-m", "xlalint", str(root), "--format", "json", "--no-cache", "--jobs", str(jobs),
               *extra]
    result = measure(command, cwd=Path.cwd())
    result["load"] = (load, os.getloadavg()[0])
    result["changes"] = differences(before, snapshot(root))
    result["seconds"] = sorted(((float(m["seconds"]), m["path"]) for m in PROGRESS.finditer(result["stderr"])),
                               reverse=True)
    try:
        result["report"] = json.loads(result["stdout"])
    except ValueError:
        result["report"] = None
    return result


def print_run(jobs: int, result: dict) -> None:
    files = len(result["seconds"])
    print(f"--jobs {jobs}: rc {result['rc']}, {result['wall_s']:.1f} s wall, {result['cpu_s']:.1f} s CPU, "
          f"peak {result['peak_mb']:,.0f} MB (tree), {result['max_proc_mb']:,.0f} MB (largest process); "
          f"{files} files checked, {result['wall_s'] / max(files, 1):.2f} s wall and "
          f"{result['cpu_s'] / max(files, 1):.2f} s CPU per file; load average {result['load'][0]:.1f} "
          f"before, {result['load'][1]:.1f} after")
    print("  slowest: " + ", ".join(f"{Path(p).name} {s:.1f} s" for s, p in result["seconds"][:5]))
    print("  tree unchanged" if not result["changes"] else
          f"  TREE CHANGED ({len(result['changes'])}): " + "; ".join(result["changes"][:20]))
    if result["report"] is None:
        print("  no JSON report; stderr ends: " + result["stderr"][-600:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--jobs", default="1,2", help="comma-separated --jobs values, each a run (default 1,2)")
    parser.add_argument("--timeout", help="xlalint's --timeout (seconds per file); default: xlalint's")
    parser.add_argument("--device", help="xlalint's --device; default: xlalint's")
    parser.add_argument("--list", action="store_true", help="print every notebook's category and error")
    args = parser.parse_args()
    extra = [flag for name in ("timeout", "device") if getattr(args, name)
             for flag in (f"--{name}", getattr(args, name))]
    runs = {}
    for jobs in [int(j) for j in args.jobs.split(",")]:
        runs[jobs] = run_once(args.path, jobs, extra)
        print_run(jobs, runs[jobs])
    if len(runs) > 1:
        first, *rest = runs
        print("speedup: " + ", ".join(f"--jobs {j} {runs[first]['wall_s'] / runs[j]['wall_s']:.2f}x wall against "
                                      f"--jobs {first}" for j in rest))
    outcomes = {jobs: classify(args.path, run["report"], {p for _, p in run["seconds"]})
                for jobs, run in runs.items() if run["report"] is not None}
    if outcomes:
        notebooks = outcomes[max(outcomes)]
        print_outcomes(notebooks)
        differ = [name for name in notebooks  # an object's address in a message aside
                  if len({ADDRESS.sub("0x", repr(found[name])) for found in outcomes.values()}) > 1]
        print(f"  each notebook's outcome the same in every run: {'yes' if not differ else 'NO: ' + ', '.join(differ)}")
        if args.list:
            for name, notebook in notebooks.items():
                print(f"  {name}: {notebook['category']} {notebook['verdicts'] or ''} {notebook['error'] or ''}")


if __name__ == "__main__":
    main()
