"""What checking each file in a fresh process costs, against a shared worker (an older commit).

    python bench/isolation_cost.py [--before REV] [--repeat N]

Runs the same files — every ``.py`` under ``rules/`` and ``fixtures/*.py`` of this checkout — through
this checkout's xlalint and through ``REV``'s (default: the last commit before per-file isolation,
whose worker imported every file into one process), each with ``--jobs 1`` and ``--jobs 2``,
``--no-cache --device cpu``, alternating so that both see the same machine load. Prints wall
time per run, the isolation cost per file (after - before, ``--jobs 1``) and the ``--jobs 2``
speedup of each side. A report, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _harness import REPO, measure

SHARED_WORKER = "7082859"  # the last commit whose worker traced every file in one process


def _files() -> list[str]:
    files = sorted(str(p) for p in (REPO / "rules").rglob("*.py"))
    return files + sorted(str(p) for p in (REPO / "fixtures").glob("*.py"))


def _command(files: list[str], jobs: int) -> list[str]:
    """Run from a checkout, ``python -m`` imports that checkout's xlalint (and the old worker did too)."""
    return [sys.executable, "-m", "xlalint", *files, "--format", "json", "-q", "--no-cache", "--device", "cpu",
            "--jobs", str(jobs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=SHARED_WORKER, help="the commit to compare with")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration (median shown)")
    args = parser.parse_args()
    files = _files()
    with tempfile.TemporaryDirectory(prefix="xlalint-before-") as tmp:
        before = Path(tmp) / "checkout"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(before), args.before],
                       check=True)
        try:
            walls: dict[tuple[str, int], list[float]] = {}
            for _ in range(args.repeat):
                for side, checkout in (("before", before), ("after", REPO)):
                    for jobs in (1, 2):
                        walls.setdefault((side, jobs), []).append(
                            measure(_command(files, jobs), cwd=checkout)["wall_s"])
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)], check=False)
    wall = {key: statistics.median(values) for key, values in walls.items()}
    print(f"{len(files)} files, --device cpu --no-cache, median of {args.repeat} run(s)")
    for side in ("before", "after"):
        print(f"  {side:<6} ({args.before if side == 'before' else 'this checkout'}): "
              f"--jobs 1 {wall[(side, 1)]:6.1f} s   --jobs 2 {wall[(side, 2)]:6.1f} s   "
              f"speedup {wall[(side, 1)] / wall[(side, 2)]:.2f}x")
    print(f"  isolation cost per file (--jobs 1): {(wall[('after', 1)] - wall[('before', 1)]) / len(files):+.3f} s")


if __name__ == "__main__":
    main()
