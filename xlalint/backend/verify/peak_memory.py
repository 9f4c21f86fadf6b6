"""Peak memory of one step, with and without XLA, measured the same way on every machine.

GPU: the device allocator's own peak (``allocator-peak``). CPU: the allocator cannot be
trusted (TensorFlow's oneDNN allocator answers zeros and keeps freed memory, so a second
call in the same process shows almost nothing; the plain allocator raises), so each figure
comes from a fresh child process (``child-rss-hwm``): the step is exported as a SavedModel,
the child loads it with oneDNN off, runs it once as a warm-up (compiling it), then reports
its resident-memory high-water mark during one more call, minus its resident memory just
before that call. Run as ``python -m xlalint.backend.verify.peak_memory DIR xla|tf``: the child.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

from xlalint.process.python_child import module_command

ALLOCATOR = "allocator-peak"
CHILD_RSS = "child-rss-hwm"
CHILD_TIMEOUT_S = 600
# Same kernels and allocator on every machine; CPU only; no log lines on stderr.
_CHILD_ENV = {"TF_ENABLE_ONEDNN_OPTS": "0", "CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}
_INPUTS = "inputs.npz"


def run(fn, inputs, times: int = 1):
    """Call ``fn`` ``times`` times, waiting for every result; the last outputs (None if no call)."""
    outputs = None
    for _ in range(times):
        outputs = fn(*inputs)
        for tensor in tf.nest.flatten(outputs, expand_composites=True):
            if hasattr(tensor, "numpy"):
                tensor.numpy()  # waits for the device
    return outputs


def allocator_peak(call, device: str) -> int | None:
    """The allocator's peak bytes on ``device`` during ``call()``; None when it keeps none (raises or says 0)."""
    try:
        tf.config.experimental.reset_memory_stats(device)
        call()
        peak = int(tf.config.experimental.get_memory_info(device)["peak"])
    except ValueError:  # this device keeps no allocator statistics
        return None
    return peak or None  # zeros are a missing statistic, not a measurement


def child_peaks(step, flat_inputs: list, variables) -> dict[str, int | None]:
    """{"xla": bytes, "tf": bytes} for ``step(*flat_inputs)``, each from its own fresh child process.

    ``variables``: those ``step`` uses, saved with it. None where the step cannot be exported
    or the child fails (e.g. no /proc high-water mark to read).
    """
    with tempfile.TemporaryDirectory(prefix="xlalint-peak-") as directory:
        try:
            _export(step, flat_inputs, variables, directory)
        except Exception:  # user code that SavedModel cannot hold: no figure, never a crash
            return {"xla": None, "tf": None}
        return {side: _run_child(directory, side) for side in ("xla", "tf")}


def _export(step, flat_inputs: list, variables, directory: str) -> None:
    module = tf.Module()
    module.kept_variables = list(variables)
    module.step = tf.function(step, input_signature=[tf.TensorSpec(t.shape, t.dtype) for t in flat_inputs])
    tf.saved_model.save(module, directory)
    np.savez(os.path.join(directory, _INPUTS), *[np.asarray(t) for t in flat_inputs])


def _run_child(directory: str, side: str) -> int | None:
    try:
        done = subprocess.run(module_command(__name__, directory, side), capture_output=True, text=True,
                              env={**os.environ, **_CHILD_ENV}, timeout=CHILD_TIMEOUT_S)
        return json.loads(done.stdout.strip().splitlines()[-1])["peak_bytes"]
    except (subprocess.TimeoutExpired, IndexError, ValueError, KeyError):
        return None


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as status:
        found = re.search(rf"^{key}:\s+(\d+) kB", status.read(), re.M)
    if found is None:
        raise OSError(f"no {key} in /proc/self/status")
    return int(found.group(1)) * 1024


def _measure(directory: str, side: str) -> int | None:
    """In the child: resident high-water mark during one call after a warm-up, minus the resident memory before it."""
    loaded = tf.saved_model.load(directory)  # kept: its variables die with it
    with np.load(os.path.join(directory, _INPUTS)) as saved:
        inputs = [tf.constant(saved[f"arr_{i}"]) for i in range(len(saved.files))]
    fn = tf.function(loaded.step, jit_compile=side == "xla")
    run(fn, inputs)  # warm-up: traces and compiles
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)  # glibc: give freed heap pages back, so the call must touch them again
    except AttributeError:
        pass
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # reset the high-water mark to the resident memory now (Linux 4.0+)
        before = _status_bytes("VmRSS")
    except (OSError, AttributeError):
        return None
    run(fn, inputs)
    peak = _status_bytes("VmHWM") - before
    return peak or None  # below one page: nothing measured


if __name__ == "__main__":
    print(json.dumps({"peak_bytes": _measure(sys.argv[1], sys.argv[2])}))
