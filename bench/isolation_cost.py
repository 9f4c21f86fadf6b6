"""What checking each file in a fresh process costs, against a shared worker (an older commit).

    python bench/isolation_cost.py [--before REV ...] [--repeat N]

Runs the same files — every ``.py`` under ``rules/`` and ``fixtures/*.py`` of this checkout — through
each ``REV``'s xlalint (default: the last commit before per-file isolation, whose worker imported
every file into one process) and this checkout's, each with ``--jobs 1`` and ``--jobs 2``,
``--no-cache --device cpu``, alternating so that all see the same machine load. Prints wall and
CPU time per run, the ``--jobs 2`` speedup and peak memory of each side, and each side's cost per
file against the first ``REV`` (the isolation cost: at most 0.1 s is the goal). A report, not a test.
"""

from __future__ import annotations

import argparse
import os

from _harness import REPO, checkouts, print_sides, side_by_side

SHARED_WORKER = "7082859"  # the last commit whose worker traced every file in one process


def _files() -> list[str]:
    files = sorted(str(p) for p in (REPO / "rules").rglob("*.py"))
    return files + sorted(str(p) for p in (REPO / "fixtures").glob("*.py"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", action="append", help=f"a commit to compare with (default: {SHARED_WORKER}); "
                        "repeat it for several")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration (median shown)")
    args = parser.parse_args()
    files = _files()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with checkouts(args.before or [SHARED_WORKER]) as sides:
        result = side_by_side(files, sides, args.repeat)
    print(f"{len(files)} files, --device cpu --no-cache, median of {args.repeat} run(s); "
          f"load average after: {os.getloadavg()[0]:.1f}")
    print_sides(result, list(sides), len(files))


if __name__ == "__main__":
    main()
