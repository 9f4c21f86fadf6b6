"""How xlalint copes with huge graphs: time and peak memory for 50k to 200k ops.

Each size is a generated file whose tf.function unrolls a Python loop (two ops per step)
and ends with one host callback, so the one finding must still be found at its line.
Prints, per size: ops, xlalint wall time, peak RSS of the parent and of the worker, and
the finding's line. Run: python bench/huge_graph.py [STEPS ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = '''import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def deep(x):
    for _ in range({steps}):
        x = x * 1.0001 + 0.5
    return tf.numpy_function(lambda a: a, [x], tf.float32)  # line 9
'''


def measure(steps: int, workdir: Path) -> dict:
    path = workdir / f"deep_{steps}.py"
    path.write_text(SOURCE.format(steps=steps))
    code = ("import json, resource, sys; from xlalint.cli.main import main; rc = main(sys.argv[1:]); "
            "print(json.dumps({'parent_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "'worker_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}), file=sys.stderr)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(path), "--format", "json", "--no-cache",
                           "--device", "cpu", "--timeout", "1800", "--max-memory", "0",
                           "--save-graphs", str(workdir)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    report = json.loads(done.stdout)
    memory = json.loads(done.stderr.strip().splitlines()[-1])
    graph = json.loads(next(workdir.glob(f"*deep_{steps}.deep.json")).read_text())["graph"]
    lines = [f["line"] for f in report["findings"] if f["code"] == "XLA001"]
    return {"ops": len(graph["nodes"]), "seconds": seconds, "parent_mb": memory["parent_kb"] / 1024,
            "worker_mb": memory["worker_kb"] / 1024, "finding_lines": lines}


def main(sizes: list[int]) -> None:
    print(f"{'ops':>9} {'xlalint s':>10} {'parent MB':>10} {'worker MB':>10}  finding at")
    with tempfile.TemporaryDirectory() as tmp:
        for steps in sizes:
            row = measure(steps, Path(tmp))
            print(f"{row['ops']:>9,} {row['seconds']:>10.1f} {row['parent_mb']:>10.0f} {row['worker_mb']:>10.0f}"
                  f"  line {row['finding_lines']}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [25_000, 50_000, 100_000])
