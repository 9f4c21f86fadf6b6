"""What one run server, and its clones, save `xlalint run` with several commands listed in ``[tool.xlalint]``.

    python bench/run_listed.py [--repeat N] [--jobs N]

Copies twenty tutorial-sized scripts (tests/data/run's scenarios: custom loops, Keras fit, an argparse
``main()`` run as ``-m``, a loop that needs real values, a strategy over virtual devices; the examples;
fixtures that train under ``__main__``) into a scratch project listing them under
``run``, then runs ``xlalint run --format json --device cpu`` there with this checkout, in turn:
``--jobs 1`` (each run forked from one server), ``--jobs N`` (N runs at once, each forked from a
clone of that server) and, as the baseline, ``--jobs 1`` with ``XLALINT_NO_FORK=1`` (a fresh
interpreter per run, as every run had before the server). Prints the median wall and CPU time of
each (the CPU of every process the command waited for), the wall per script, the ratios, and whether
all gave the same report; and what a script costs beyond its own trace: the wall per script less the
seconds TensorFlow spent tracing its captured functions (each run's ``trace_s``), which the script
pays itself when it runs. A report, not a test.
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

RUN = "tests/data/run/"
# (the file copied into the scratch project, the command listed for it); each script's own helpers are copied too
LISTED = [(RUN + "clean_loop.py", "clean_loop.py --epochs 1"),
          (RUN + "argparse_main.py", "-m argparse_main --units 16 8 --batch-size 16"),
          (RUN + "fit_partial_batch.py", "fit_partial_batch.py"), (RUN + "subclassed_model.py", "subclassed_model.py"),
          (RUN + "string_step.py", "string_step.py"), (RUN + "needs_real_values.py", "needs_real_values.py"),
          (RUN + "train_step_override.py", "train_step_override.py"),
          (RUN + "fit_custom_loss_metric.py", "fit_custom_loss_metric.py"),
          (RUN + "gan_two_optimizers.py", "gan_two_optimizers.py"),
          (RUN + "retraced_in_dataset_loop.py", "retraced_in_dataset_loop.py"),
          (RUN + "autoclustered.py", "autoclustered.py"), (RUN + "fit_numpy_loss.py", "fit_numpy_loss.py"),
          (RUN + "fit_layer_without_xla.py", "fit_layer_without_xla.py"),
          (RUN + "two_file_layers.py", None), (RUN + "two_file_project.py", "two_file_project.py"),
          (RUN + "mirrored_steps.py", "mirrored_steps.py"),
          ("examples/train_loop.py", "train_loop.py --epochs 1"), ("examples/train.py", "train.py"),
          ("fixtures/advanced_quickstart.py", "advanced_quickstart.py"),
          ("fixtures/keras_fit/auto_jit.py", "auto_jit.py"), ("fixtures/keras_fit/custom_loss.py", "custom_loss.py")]
COMMANDS = [command for _, command in LISTED if command]


def _summary(stdout: str) -> list:
    """What both sides must agree on: each run's stop and each entry's verdict."""
    report = json.loads(stdout)
    return [[(r["command"], r["stopped"]) for r in report["runs"]],
            sorted((e["path"], e["name"], e["verdict"]) for e in report["entries"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side, alternating (median shown)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="runs at once on the parallel side")
    args = parser.parse_args()
    fresh = ["env", "XLALINT_NO_FORK=1"]  # a fresh interpreter per run
    sides = {"--jobs 1, one server": [], f"--jobs {args.jobs}, clones of it": [], "--jobs 1, fresh interpreters": fresh}
    jobs = dict(zip(sides, ["1", str(args.jobs), "1"]))
    os.environ["PYTHONPATH"] = str(REPO)
    project = Path(tempfile.mkdtemp(prefix="xlalint-bench-run-"))
    try:
        for source, _ in LISTED:
            shutil.copy(REPO / source, project)
        (project / "pyproject.toml").write_text(f"[tool.xlalint]\nrun = {json.dumps(COMMANDS)}\n")
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        runs: dict[str, list[dict]] = {side: [] for side in sides}
        for _ in range(args.repeat):
            for side, prefix in sides.items():
                done = measure([*prefix, sys.executable, "-m", "xlalint", "run", "--format", "json", "--device",
                                "cpu", "-q", "--jobs", jobs[side]], cwd=project)
                if not done["stdout"].strip():
                    raise SystemExit(f"{side}: no report (exit {done['rc']}): {done['stderr'][-2000:]}")
                runs[side].append(done)
        print(f"{len(COMMANDS)} listed commands, median of {args.repeat}; load average after: "
              f"{os.getloadavg()[0]:.1f}")
        medians = {side: (statistics.median(r["wall_s"] for r in done), statistics.median(r["cpu_s"] for r in done))
                   for side, done in runs.items()}
        for side, (wall, cpu) in medians.items():
            print(f"  {side:30s} wall {wall:6.1f} s ({wall / len(COMMANDS):4.1f} s a script)   cpu {cpu:6.1f} s")
        (serial, serial_cpu), (parallel, _), (alone, alone_cpu) = medians.values()
        print(f"  speed-up of --jobs {args.jobs} over --jobs 1: {serial / parallel:.2f}x wall")
        print(f"  one server / fresh interpreters: wall {serial / alone:.2f}, cpu {serial_cpu / alone_cpu:.2f}")
        traced = statistics.median(sum(run["trace_s"] for run in json.loads(r["stdout"])["runs"])
                                   for r in runs["--jobs 1, one server"])
        print(f"  their own trace: {traced:.1f} s ({traced / len(COMMANDS):.2f} s a script); beyond it, --jobs 1: "
              f"{(serial - traced) / len(COMMANDS):.2f} s a script")
        same = len({json.dumps(_summary(r["stdout"])) for done in runs.values() for r in done}) == 1
        print(f"  same runs and verdicts on both sides: {'yes' if same else 'NO'}")
    finally:
        shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    main()
