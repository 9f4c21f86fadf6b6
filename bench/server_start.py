"""When the parent starts the tracing server, counted from its own start, against an older commit.

    python bench/server_start.py [--before REV] [--repeat N]

Runs ``xlalint FILE --no-cache --device cpu`` on one small file (``fixtures/jit_split.py``) and on
the files of ``rules/XLA001``..``rules/XLA005`` from each ``REV``'s folder and this checkout's,
alternating sides. A wrapper around the command line notes the moment the parent asks for the
server process (``subprocess.Popen`` of ``xlalint.backend.worker``) after its own first line of
Python ran. Prints, per side and file set, the median of that moment, the run's wall and CPU time
(every process), and the parent's CPU time. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from _harness import checkouts, measure

# the parent, timed: the server's Popen and the parent's own CPU time go to stderr as JSON
WRAPPER = """import json, resource, subprocess, sys, time
start, marks = time.perf_counter(), {}
popen = subprocess.Popen.__init__
def timed(self, args, *rest, **kwargs):
    if any("xlalint.backend.worker" in str(a) for a in args):
        marks.setdefault("server_s", time.perf_counter() - start)
    popen(self, args, *rest, **kwargs)
subprocess.Popen.__init__ = timed
sys.argv[0] = "xlalint"
from xlalint.cli.main import main
try:
    code = main()
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    marks["parent_cpu_s"] = usage.ru_utime + usage.ru_stime
    print("\\nTIMING " + json.dumps(marks), file=sys.stderr)
sys.exit(code)
"""
SETS = {"1 small file": ["fixtures/jit_split.py"],
        "rules/XLA001..005 (10 files)": [f"rules/XLA00{i}/{kind}.py" for i in range(1, 6) for kind in ("bad", "good")]}


def run(folder, files: list[str]) -> dict:
    done = measure([sys.executable, "-c", WRAPPER, *files, "--no-cache", "--device", "cpu", "-q", "--format", "json"],
                   cwd=folder)
    marks = json.loads(done["stderr"].rsplit("TIMING ", 1)[1])
    return {"server_s": marks.get("server_s", float("nan")), "parent_cpu_s": marks["parent_cpu_s"],
            "wall_s": done["wall_s"], "cpu_s": done["cpu_s"], "stdout": done["stdout"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="faf54ff", help="the commit to compare with (default: faf54ff)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each configuration (median shown)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    runs: dict[tuple[str, str], list[dict]] = {}
    with checkouts([args.before]) as sides:
        for _ in range(args.repeat):
            for label, files in SETS.items():
                for side, folder in sides.items():
                    runs.setdefault((label, side), []).append(run(folder, files))  # its own copy of them
    print(f"median of {args.repeat} run(s), --no-cache --device cpu --jobs default; "
          f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"{'':30}{'side':>16}{'server asked':>14}{'wall':>8}{'CPU':>8}{'parent CPU':>12}{'same report':>13}")
    for (label, side), values in runs.items():
        median = {k: statistics.median(v[k] for v in values) for k in ("server_s", "wall_s", "cpu_s", "parent_cpu_s")}
        same = values[-1]["stdout"] == runs[(label, args.before)][-1]["stdout"]
        print(f"{label:30}{side:>16}{median['server_s']:12.2f} s{median['wall_s']:6.1f} s{median['cpu_s']:6.1f} s"
              f"{median['parent_cpu_s']:10.2f} s{str(same):>13}")


if __name__ == "__main__":
    main()
