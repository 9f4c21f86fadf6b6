"""Peak memory of a Keras ResNet50 training step on CPU, with and without XLA, as ``--verify`` measures it.

    python bench/verify_memory.py              # batch 8
    python bench/verify_memory.py --batch 4

Runs ``verify_entry`` on the training step (SGD with momentum, 224x224 images, random
weights) and prints its memory fields and their ratio. Each figure comes from a fresh child
process (see xlalint/backend/verify/peak_memory.py). Takes minutes on a small CPU. A report, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path

import keras
from resnet50 import CASES

from xlalint.backend.discover import Candidate
from xlalint.backend.verify.compare import verify_entry


def training_step(batch: int) -> Candidate:
    """The training step of bench/resnet50.py, imported from a file as a user's module is."""
    name, source = CASES["train"]
    path = Path(tempfile.mkdtemp(prefix="xlalint-memory-")) / "resnet50_train.py"
    path.write_text(source.format(batch=batch))
    spec = importlib.util.spec_from_file_location("resnet50_train", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.optimizer.build(module.model.trainable_variables)  # its variables exist before the step is traced
    step = getattr(module, name)
    return Candidate(name, 1, "function", function=step, python_function=step.python_function,
                     specs=list(step.input_signature))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    started = time.perf_counter()
    result = verify_entry(training_step(args.batch), device="cpu", steps=1, runs=1)
    fields = ("device", "compiled", "training_step", "memory_method", "xla_peak_bytes", "tf_peak_bytes",
              "compile_s", "xla_step_s", "tf_step_s", "error")
    print(json.dumps({k: result[k] for k in fields}, indent=1))
    xla, plain = result["xla_peak_bytes"], result["tf_peak_bytes"]
    if xla and plain:
        print(f"batch {args.batch}: XLA {xla / 2**20:.0f} MiB, TF {plain / 2**20:.0f} MiB, "
              f"XLA/TF {xla / plain:.2f} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
