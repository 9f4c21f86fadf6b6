"""Snapshot xlalint's JSON reports over the repo's own inputs, to show that a refactor changes no answer.

    python tools/snapshot_reports.py OUT_DIR              # write one JSON report per mode into OUT_DIR
    diff -r BEFORE_DIR AFTER_DIR                           # the comparison: no output, no change

The check command runs over ``rules/``, ``fixtures/``, ``examples/`` and ``tests/data/run/`` in every
mode (full and ``--static``; ``--mode auto|jit|autocluster``; ``--device gpu|cpu``), and ``xlalint run``
over each script of ``tests/data/run/`` (in a copy of that folder) and ``examples/train_loop.py``.
Nothing is cached, and the reports are written as the command prints them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INPUTS = ["rules", "fixtures", "examples", "tests/data/run"]
CHECK_MODES = {
    "check-auto-gpu": [],
    "check-jit-gpu": ["--mode", "jit"],
    "check-autocluster-gpu": ["--mode", "autocluster"],
    "check-auto-cpu": ["--device", "cpu"],
    "static-gpu": ["--static"],
    "static-cpu": ["--static", "--device", "cpu"],
}
# Arguments of `xlalint run` for the scripts that need them (tests/test_run.py gives the same).
RUN_ARGS = {"string_step": ["--epochs", "2"], "argparse_main": ["--steps", "3"]}
RUN_BUDGET = {"prepares_forever": "4"}
RUN_ENV = {"autoclustered": {"TF_XLA_FLAGS": "--tf_xla_cpu_global_jit"}}


def xlalint(args: list[str], cwd: Path, env: dict | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "xlalint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=1800)
    return f"exit {done.returncode}\n{done.stdout}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--only", choices=["check", "run"], help="one half of the snapshot")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    common = ["--format", "json", "--no-cache", "-q", "--timeout", "30", "--jobs", options.jobs]
    if options.only != "run":
        for name, mode in CHECK_MODES.items():
            (options.out / f"{name}.json").write_text(xlalint([*common, *mode, *INPUTS], REPO))
            print(name, flush=True)
    if options.only != "check":
        work = Path(tempfile.gettempdir()) / "xlalint-snapshot-run"  # one place: paths in messages stay equal
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        for script in sorted((REPO / "tests/data/run").glob("*.py")):
            shutil.copy(script, work)
        shutil.copy(REPO / "examples/train_loop.py", work)
        for script in sorted(work.glob("*.py")):
            name = script.stem
            budget = ["--run-timeout", RUN_BUDGET[name]] if name in RUN_BUDGET else []
            report = xlalint(["run", "--format", "json", "--device", "cpu", *budget, script.name,
                              *RUN_ARGS.get(name, [])], work, RUN_ENV.get(name))
            (options.out / f"run-{name}.json").write_text(report)
            print("run", name, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
