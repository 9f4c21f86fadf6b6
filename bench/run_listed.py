"""What one run server saves `xlalint run` with several commands listed in ``[tool.xlalint]``.

    python bench/run_listed.py [--repeat N]

Copies two scenario scripts of tests/data/run (a custom loop and an argparse ``main()`` run as
``-m``) into a scratch project listing both under ``run``, then runs ``xlalint run --format json
--device cpu`` there with this checkout, alternately forking each run from one server (the
default) and with ``XLALINT_NO_FORK=1`` (a fresh interpreter per run, as every run had before the
server: the baseline). Prints the median wall and CPU time of each (the CPU of every process the
command waited for), their ratio, and whether both gave the same report. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _harness import REPO, measure

SCRIPTS = ("clean_loop.py", "argparse_main.py")
LISTED = ["clean_loop.py --epochs 1", "-m argparse_main --units 16 8 --batch-size 16"]
SIDES = {"one server, forked runs": [], "fresh interpreter per run": ["env", "XLALINT_NO_FORK=1"]}


def _summary(stdout: str) -> list:
    """What both sides must agree on: each run's stop and each entry's verdict."""
    report = json.loads(stdout)
    return [[(r["command"], r["stopped"]) for r in report["runs"]],
            sorted((e["path"], e["name"], e["verdict"]) for e in report["entries"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side, alternating (median shown)")
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = str(REPO)
    project = Path(tempfile.mkdtemp(prefix="xlalint-bench-run-"))
    try:
        for name in SCRIPTS:
            shutil.copy(REPO / "tests" / "data" / "run" / name, project)
        (project / "pyproject.toml").write_text(f"[tool.xlalint]\nrun = {json.dumps(LISTED)}\n")
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        runs: dict[str, list[dict]] = {side: [] for side in SIDES}
        for _ in range(args.repeat):
            for side, prefix in SIDES.items():
                done = measure([*prefix, sys.executable, "-m", "xlalint", "run", "--format", "json", "--device",
                                "cpu", "-q"], cwd=project)
                if not done["stdout"].strip():
                    raise SystemExit(f"{side}: no report (exit {done['rc']}): {done['stderr'][-2000:]}")
                runs[side].append(done)
        print(f"{len(LISTED)} listed commands, median of {args.repeat}; load average after: "
              f"{os.getloadavg()[0]:.1f}")
        medians = {side: (statistics.median(r["wall_s"] for r in done), statistics.median(r["cpu_s"] for r in done))
                   for side, done in runs.items()}
        for side, (wall, cpu) in medians.items():
            print(f"  {side:28s} wall {wall:6.1f} s   cpu {cpu:6.1f} s")
        (wall, cpu), (base_wall, base_cpu) = medians.values()
        print(f"  ratio (server / fresh)       wall {wall / base_wall:6.2f}     cpu {cpu / base_cpu:6.2f}")
        same = len({json.dumps(_summary(r["stdout"])) for done in runs.values() for r in done}) == 1
        print(f"  same runs and verdicts on both sides: {'yes' if same else 'NO'}")
    finally:
        shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    main()
