"""`xlalint run` against the same script's own time to the end of its first step, with XLA and without.

    nice -n 10 python bench/run_first_step.py [--repeat N] [--only small|resnet50] [--optimizer sgd|adam]

Two training scripts in the shape users write (a custom loop whose ``train_step`` has
``jit_compile=True``): a small MLP, and ResNet50 (``keras.applications.ResNet50(weights=None)``,
64x64 images, batch 8). Each script ends after its first step (``float(loss)``: the step really
ran). Plain SGD builds no variables in the step; with ``--optimizer adam`` the first call builds
Adam's slots, the case TensorFlow traces twice. Per script, alternating so that all three see the
same machine load:

- ``xla``: ``python SCRIPT`` — TensorFlow traces, XLA compiles and runs the step;
- ``plain``: ``python SCRIPT`` with ``jit_compile=False`` — traced and run without XLA;
- ``xlalint run``: ``python -m xlalint run --format json --device cpu SCRIPT`` — the step captured,
  checked and reported, not compiled and not run.

Wall times are process start to exit (TensorFlow's import included on every side). Targets
(issue 21): ``xlalint run`` at most 1.2x ``plain``, and under half of ``xla`` on ResNet50. One
more run of the xlalint side, from this process, says where its time goes: the parent's imports,
the child (TensorFlow's import, the script up to its step, the trace, the graph export), and the
report. A report, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import REPO, measure

sys.path.insert(0, str(REPO))  # this checkout's xlalint, here and in the xlalint side's process

SCRIPT = '''
import os
import sys

import keras
import numpy as np
import tensorflow as tf

JIT = os.environ.get("BENCH_JIT", "1") == "1"


def model_and_data():
{model}


def main():
    model, x, y = model_and_data()
    optimizer = {optimizer}
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=JIT)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
        return loss

    for images, labels in tf.data.Dataset.from_tensor_slices((x, y)).batch({batch}, drop_remainder=True):
        print("first step loss", float(train_step(images, labels)))
        sys.exit(0)  # the first step is done


if __name__ == "__main__":
    main()
'''

MODELS = {
    "small": ('''    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
    rng = np.random.default_rng(0)
    return model, rng.normal(size=(256, 32)).astype("float32"), rng.integers(0, 10, 256).astype("int32")''', 32),
    "resnet50": ('''    model = keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10)
    rng = np.random.default_rng(0)
    return model, rng.normal(size=(16, 64, 64, 3)).astype("float32"), rng.integers(0, 10, 16).astype("int32")''',
                 8),
}

OPTIMIZERS = {"sgd": "keras.optimizers.SGD(0.01)", "adam": "keras.optimizers.Adam(1e-3)"}


def _sides(script: Path) -> dict[str, tuple[list[str], dict]]:
    python = [sys.executable, str(script)]
    return {"xla": (python, {"BENCH_JIT": "1"}), "plain": (python, {"BENCH_JIT": "0"}),
            "xlalint run": ([sys.executable, "-m", "xlalint", "run", "--format", "json", "--device", "cpu", "-q",
                             str(script)], {"BENCH_JIT": "1", "PYTHONPATH": str(REPO)})}


def _run(command: list[str], env: dict, folder: Path) -> dict:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = measure(command, cwd=folder)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if result["rc"] not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({result['rc']}):\n{result['stderr'][-3000:]}")
    return result


def _phases(script: Path) -> dict[str, float]:
    """Seconds of each part of one ``xlalint run`` of ``script`` (run from its folder, as above)."""
    imports = subprocess.run([sys.executable, "-X", "importtime", "-c", "import xlalint.cli.run, "
                              "xlalint.run.client, xlalint.run.report"], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    parent_import = sum(int(line.split("|")[0].split(":")[1]) for line in imports.stderr.splitlines()[1:]) / 1e6
    from xlalint.run.client import run_script
    from xlalint.run.report import run_report
    from xlalint.settings.table import merge, options

    here = os.getcwd()
    os.chdir(script.parent)
    os.environ["BENCH_JIT"] = "1"
    try:
        started = time.perf_counter()
        result = run_script(str(script), None, [], 120.0, 2)
        child = time.perf_counter() - started
        report = run_report(result, str(script), options(merge({"device": "cpu"}, {}), root=str(script.parent)))
        reported = time.perf_counter() - started - child
    finally:
        os.chdir(here)
    [record] = result["records"]
    assert report.entries, report
    return {"parent: import xlalint (self times, -X importtime)": parent_import,
            "child: start, TensorFlow, the script, trace, export, write": child,
            "  of which trace (get_concrete_function)": record["timing"]["trace_s"],
            "  of which graph export": record["timing"]["export_s"],
            "parent: read back, rules, report": reported}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per side (median reported)")
    parser.add_argument("--only", choices=list(MODELS), help="one script")
    parser.add_argument("--optimizer", choices=list(OPTIMIZERS), default="sgd",
                        help="adam: the first step builds the optimizer's slots")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="xlalint-bench-") as tmp:
        folder = Path(tmp)
        for name, (model, batch) in MODELS.items():
            if args.only and name != args.only:
                continue
            script = folder / f"train_{name}.py"
            script.write_text(SCRIPT.format(model=model, batch=batch, optimizer=OPTIMIZERS[args.optimizer]))
            walls: dict[str, list[float]] = {}
            cpus: dict[str, list[float]] = {}
            for _ in range(args.repeat):
                for side, (command, env) in _sides(script).items():
                    result = _run(command, env, folder)
                    walls.setdefault(side, []).append(result["wall_s"])
                    cpus.setdefault(side, []).append(result["cpu_s"])
            wall = {side: statistics.median(v) for side, v in walls.items()}
            cpu = {side: statistics.median(v) for side, v in cpus.items()}
            print(f"\n== {name} (batch {batch}), median of {args.repeat}: time to the end of the first step")
            print(f"{'':16}{'wall s':>9}{'cpu s':>9}")
            for side in wall:
                print(f"{side:16}{wall[side]:9.1f}{cpu[side]:9.1f}")
            run = wall["xlalint run"]
            print(f"xlalint run / plain: {run / wall['plain']:.2f}x (target <= 1.2x); "
                  f"xlalint run / xla: {run / wall['xla']:.2f}x (target < 0.5x on resnet50); "
                  f"in CPU time: {cpu['xlalint run'] / cpu['plain']:.2f}x and {cpu['xlalint run'] / cpu['xla']:.2f}x")
            print("where the xlalint run's time goes (one more run, wall s):")
            for phase, seconds in _phases(script).items():
                print(f"  {phase:58}{seconds:7.2f}")


if __name__ == "__main__":
    main()
