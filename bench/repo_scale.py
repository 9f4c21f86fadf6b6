"""The check command on a generated repository, from 100 to 1,000 files: how its cost grows.

    python bench/repo_scale.py [--sizes 100,1000] [--jobs 1,2] [--keep DIR] [--before REV] [--repeat N]

Writes a repository in realistic shares: half plain Python (helpers, configs, tests with no
TensorFlow), a quarter small modules of ``tf.function``s with signatures, and the rest Keras models,
custom training steps and ``tf.data`` map functions (bench/example_dir.py's five kinds, every third
with a blocker) with one notebook in five of them. For each size, and each ``--jobs``, it measures
with this checkout: a cold run (an empty result cache), a cached rerun, ``--static``, and the two
shards of ``--shard K/2`` followed by ``xlalint merge`` (checked to give the cold run's findings).
Prints wall and CPU time (every process the command waited for), the peak resident memory of the
whole process tree, the cost per file, and the ratios between sizes: flat per-file costs mean
linear growth. With ``--before REV``, the cached rerun is also made by that commit (checked out with
``git worktree``) on the same cache, alternately with this checkout, ``--repeat`` times each (medians): what
a commit changed in a rerun, under one machine load. A report, not a test; the load average is printed with it.
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

import nbformat

from _harness import REPO, checkouts, measure, xlalint_command
from example_dir import write_files

PLAIN = '''"""Helpers of the project, number {index}: no TensorFlow here."""
import dataclasses
import json


@dataclasses.dataclass
class Settings{index}:
    learning_rate: float = {rate}
    batch_size: int = {batch}
    name: str = "run-{index}"


def load_settings(text: str) -> Settings{index}:
    values = json.loads(text)
    return Settings{index}(**{{k: v for k, v in values.items() if k in ("learning_rate", "batch_size", "name")}})


def schedule(step: int, warmup: int = {warmup}) -> float:
    return min(1.0, (step + 1) / warmup)
'''
FUNCTIONS = '''"""Small compiled functions, module {index}."""
import tensorflow as tf


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, {width}], tf.float32)])
def normalise(x):
    mean = tf.reduce_mean(x, axis=0, keepdims=True)
    return (x - mean) / (tf.math.reduce_std(x, axis=0, keepdims=True) + 1e-6)


@tf.function(input_signature=[tf.TensorSpec([{width}, {width}], tf.float32), tf.TensorSpec([{width}], tf.float32)])
def affine(w, b):
    return tf.nn.relu(tf.linalg.matvec(w, b) + b){blocker}
'''
FUNCTION_BLOCKER = '''


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None], tf.float32)])
def describe(x):
    return tf.strings.as_string(x)
'''


def write_repository(root: Path, count: int) -> None:
    """``count`` files under ``root`` in the shares the module docstring gives."""
    folders = {name: root / name for name in ("utils", "ops", "models", "notebooks")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "generated"\nversion = "0.1"\n')  # the project's root
    plain, functions = count // 2, count // 4
    for index in range(plain):
        (folders["utils"] / f"helpers_{index:04d}.py").write_text(PLAIN.format(
            index=index, rate=0.001 * (1 + index % 7), batch=16 * (1 + index % 4), warmup=100 + index))
    for index in range(functions):
        (folders["ops"] / f"ops_{index:04d}.py").write_text(FUNCTIONS.format(
            index=index, width=4 + index % 13, blocker=FUNCTION_BLOCKER if index % 5 == 4 else ""))
    models = count - plain - functions
    for index, path in enumerate(write_files(folders["models"], models)):
        if index % 5 == 4:  # a notebook of the same code, split into cells at blank lines
            source = Path(path).read_text()
            cells = [nbformat.v4.new_code_cell(cell) for cell in source.split("\n\n\n") if cell.strip()]
            nbformat.write(nbformat.v4.new_notebook(cells=cells), str(folders["notebooks"] / (Path(path).stem + ".ipynb")))
            os.unlink(path)


def _findings(stdout: str) -> list:
    report = json.loads(stdout)
    return sorted((f["path"], f["line"], f["code"]) for f in report["findings"])


def _measured(command: list[str], cwd: Path) -> dict:
    done = measure(command, cwd=cwd)
    if done["rc"] not in (0, 1) or not done["stdout"].strip():
        raise SystemExit(f"{' '.join(command)}: exit {done['rc']}: {done['stderr'][-2000:]}")
    return done


def _cached(root: Path, flags: list[str], sides: dict[str, Path], repeat: int) -> dict[str, dict]:
    """``{mode: median measure}`` of the cached rerun made by each side (``python -m xlalint`` of its folder),
    alternately, on the cache the cold run filled; every side must report the same findings."""
    runs: dict[str, list[dict]] = {}
    for _ in range(repeat):
        for side, folder in sides.items():
            os.environ["PYTHONPATH"] = str(folder)
            runs.setdefault("cached" if folder == REPO else f"cached {side}", []).append(
                _measured(xlalint_command(["."], *flags), root))
    os.environ["PYTHONPATH"] = str(REPO)
    if len({str(_findings(done[-1]["stdout"])) for done in runs.values()}) > 1:
        raise SystemExit("the cached reruns of the sides report different findings")
    return {mode: {field: statistics.median(d[field] for d in done) for field in ("wall_s", "cpu_s", "peak_mb")}
            for mode, done in runs.items()}


def measure_size(root: Path, jobs: int, sides: dict[str, Path], repeat: int) -> dict[str, dict]:
    """Each mode's measures on the repository at ``root`` with ``jobs`` jobs; the cached rerun by each of
    ``sides``."""
    cache = Path(tempfile.mkdtemp(prefix="xlalint-bench-cache-"))
    flags = ["--device", "cpu", "--jobs", str(jobs), "--cache-dir", str(cache)]
    try:
        cold = _measured(xlalint_command(["."], *flags), root)
        modes = {"cold": cold, **_cached(root, flags, sides, repeat),
                 "static": _measured(xlalint_command(["."], "--static", "--device", "cpu"), root)}
        shutil.rmtree(cache)
        shards = [_measured(xlalint_command(["."], *flags, "--shard", f"{k}/2"), root) for k in (1, 2)]
        parts = []
        for k, shard in enumerate(shards, 1):
            parts.append(root.parent / f"shard-{k}.json")
            parts[-1].write_text(shard["stdout"])
        merged = _measured([sys.executable, "-m", "xlalint", "merge", *map(str, parts), "--format", "json"], root)
        if _findings(merged["stdout"]) != _findings(cold["stdout"]):
            raise SystemExit("the merged shards' findings differ from the single run's")
        modes["shards"] = {"wall_s": max(s["wall_s"] for s in shards) + merged["wall_s"],  # as a matrix runs them
                           "cpu_s": sum(s["cpu_s"] for s in shards) + merged["cpu_s"],
                           "peak_mb": max(s["peak_mb"] for s in shards)}
        modes["merge"] = merged
        return modes
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="repository sizes, comma-separated")
    parser.add_argument("--jobs", default=f"1,{os.cpu_count() or 2}", help="--jobs values, comma-separated")
    parser.add_argument("--keep", metavar="DIR", help="write the repositories here and keep them")
    parser.add_argument("--before", action="append", default=[], help="a commit whose cached rerun is measured too")
    parser.add_argument("--repeat", type=int, default=1, help="cached reruns per side (the median is printed)")
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = str(REPO)
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xlalint-bench-repo-"))
    sizes, jobs_list = [int(s) for s in args.sizes.split(",")], [int(j) for j in args.jobs.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    per_file: dict[tuple, float] = {}
    try:
        with checkouts(args.before) as sides:
            for count in sizes:
                root = base / f"repo-{count}" / "project"
                write_repository(root, count)
                for jobs in jobs_list:
                    for mode, done in measure_size(root, jobs, sides, args.repeat).items():
                        per_file[(mode, jobs, count)] = done["wall_s"] / count
                        print(f"{count:5d} files  --jobs {jobs}  {mode:7s}  wall {done['wall_s']:7.2f} s  "
                              f"cpu {done['cpu_s']:7.2f} s  peak {done['peak_mb']:6.0f} MB  "
                              f"{1000 * done['wall_s'] / count:6.1f} ms a file")
            if len(sizes) > 1:
                print(f"per-file wall at {sizes[-1]} files over {sizes[0]} (1.0: linear):")
                for mode, jobs, count in sorted(k for k in per_file if k[2] == sizes[0]):
                    growth = per_file[(mode, jobs, sizes[-1])] / per_file[(mode, jobs, count)]
                    print(f"  {mode:7s} --jobs {jobs}: {growth:.2f}")
            print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
