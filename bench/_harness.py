"""Shared by the speed benchmarks: run a command and measure it; the XLA-lowering baseline.

    python bench/_harness.py lower FILE[::NAME] ...   # the baseline child (prints one JSON object)

``measure`` runs a command with its wall time, CPU time (the process and every
descendant it waited for) and peak memory: the sampled sum of the RSS of the whole
process tree (e.g. xlalint's parent + its worker) and the largest single process
(``ru_maxrss``). Linux only (/proc).

The baseline child is what a user does today without xlalint: a fresh process that
imports TensorFlow, imports the module (building its model) and asks XLA to lower
each entry: ``tf.function(f, jit_compile=True).experimental_get_compiler_ir(*args)(stage="hlo")``.
Entries are found with xlalint's own discovery (no tracing) so both sides check the
same functions; arguments are seeded tensors from the signatures, ``None`` dims 8.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's xlalint, also where another one is installed
PAGE = os.sysconf("SC_PAGE_SIZE")
HLO_INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%\S+ = ", re.MULTILINE)


def _tree_rss(root: int) -> int:
    """Bytes resident in ``root`` and all its descendants right now."""
    parent, rss = {}, {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            pid = int(entry.name)
            parent[pid], rss[pid] = int(fields[1]), int(fields[21]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(p for p, pp in parent.items() if pp == pid)
    return total


def measure(command: list[str], interval: float = 0.1, cwd: Path = REPO) -> dict:
    """Run ``command`` in ``cwd`` (the repo root): stdout, rc, wall_s, cpu_s, peak_mb (tree), max_proc_mb."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, env=env)
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(interval)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"stdout": out.read().decode(), "stderr": err.read().decode(errors="replace"),
                "rc": proc.returncode, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                "peak_mb": peak / 2**20, "max_proc_mb": usage.ru_maxrss / 1024}


def lower_command(targets: list[str]) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "lower", *targets]


def xlalint_command(paths: list[str], *flags: str) -> list[str]:
    return [sys.executable, "-m", "xlalint", *paths, "--format", "json", "-q", *flags]


def _lower_child(targets: list[str]) -> dict:
    """Import TF once, then for each FILE[::NAME]: import the module and lower its entries."""
    import importlib.util

    started = time.perf_counter()
    import keras  # noqa: F401
    import tensorflow as tf

    result = {"import_s": time.perf_counter() - started, "files": []}
    from xlalint.backend.discover import discover
    from xlalint.backend.verify.compare import _arguments, make_inputs

    for target in targets:
        path, _, name = target.partition("::")
        path = os.path.abspath(path)
        record = {"path": path, "error": None, "entries": []}
        result["files"].append(record)
        started = time.perf_counter()
        try:
            spec = importlib.util.spec_from_file_location(f"_bench_{len(result['files'])}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            source = Path(path).read_text(encoding="utf-8")
            candidates = discover(module, source, {name: None} if name else {}, not name)
        except BaseException as error:  # noqa: BLE001 - a user module: report, go on
            record["error"] = f"{type(error).__name__}: {error}"[:200]
            continue
        finally:
            record["module_s"] = time.perf_counter() - started
        for candidate in (c for c in candidates if c.traceable):
            entry = {"name": candidate.name, "error": None}
            record["entries"].append(entry)
            started = time.perf_counter()
            try:
                args = _arguments(candidate, make_inputs(candidate.specs))
                jitted = tf.function(candidate.python_function, jit_compile=True)
                jitted.get_concrete_function(*args)
                entry["trace_s"] = time.perf_counter() - started
                hlo = jitted.experimental_get_compiler_ir(*args)(stage="hlo")
                entry["hlo_instructions"] = len(HLO_INSTRUCTION.findall(hlo))
            except Exception as error:  # noqa: BLE001 - XLA refusing is an answer too
                entry["error"] = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
            entry["lower_s"] = time.perf_counter() - started
    return result


@contextlib.contextmanager
def checkouts(revisions: list[str]):
    """``{label: directory}``: each revision checked out (``git worktree``) in a temporary folder, and
    ``"this checkout"``; the worktrees are removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="xlalint-before-") as tmp:
        made = {}
        try:
            for rev in revisions:
                folder = Path(tmp) / rev.replace("/", "_")
                subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(folder), rev],
                               check=True)
                made[rev] = folder
            yield {**made, "this checkout": REPO}
        finally:
            for folder in made.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)], check=False)


def side_by_side(files: list[str], sides: dict[str, Path], repeat: int, jobs=(1, 2)) -> dict:
    """``{(side, jobs): median measure}`` of ``xlalint FILES --no-cache --device cpu --jobs J`` run from
    each side's folder (``python -m`` imports that folder's xlalint), alternating sides and job counts
    so that all see the same machine load."""
    runs: dict[tuple[str, int], list[dict]] = {}
    for _ in range(repeat):
        for side, folder in sides.items():
            for count in jobs:
                runs.setdefault((side, count), []).append(
                    measure(xlalint_command(files, "--no-cache", "--device", "cpu", "--jobs", str(count)), cwd=folder))
    return {key: {field: statistics.median(r[field] for r in values) for field in ("wall_s", "cpu_s", "peak_mb")}
            | {"stdout": values[-1]["stdout"], "rc": values[-1]["rc"]} for key, values in runs.items()}


def print_sides(result: dict, sides: list[str], count: int) -> None:
    """One line per side: wall and CPU for --jobs 1 and 2, speedup, peak memory; then each side's cost per
    file against the first side (``--jobs 1``, wall and CPU)."""
    print(f"{'':28}{'jobs 1 wall':>12}{'CPU':>8}{'jobs 2 wall':>12}{'CPU':>8}{'speedup':>9}{'peak MB 1|2':>14}")
    for side in sides:
        one, two = result[(side, 1)], result[(side, 2)]
        print(f"  {side:26}{one['wall_s']:10.1f} s{one['cpu_s']:6.1f} s{two['wall_s']:10.1f} s{two['cpu_s']:6.1f} s"
              f"{one['wall_s'] / two['wall_s']:8.2f}x{one['peak_mb']:8,.0f}|{two['peak_mb']:,.0f}")
    base = result[(sides[0], 1)]
    for side in sides:
        one = result[(side, 1)]
        print(f"  per file, {side}: {one['wall_s'] / count:.3f} s wall, {one['cpu_s'] / count:.3f} s CPU; against "
              f"{sides[0]}: {(one['wall_s'] - base['wall_s']) / count:+.3f} s wall, "
              f"{(one['cpu_s'] - base['cpu_s']) / count:+.3f} s CPU")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


if __name__ == "__main__":
    if sys.argv[1:2] == ["lower"]:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        protocol, sys.stdout = sys.stdout, sys.stderr  # the modules' prints must not mix with the JSON
        protocol.write(json.dumps(_lower_child(sys.argv[2:])) + "\n")
    else:
        sys.exit(__doc__)
