"""Read the XLA kernel registry of the installed TensorFlow into a JSON table.

Must run in a fresh process: XLA kernels register lazily, and asking for the
GPU kernel names registers both the CPU and GPU JIT backends (even in a
CPU-only wheel) only if nothing was compiled before. Run as
``python -m xlalint.backend.support_tables OUT.json``.
"""

from __future__ import annotations

import json
import sys

from xlalint.core.support import LOCAL_DEVICES

BACKENDS = {device: f"XLA_{device.upper()}_JIT" for device in LOCAL_DEVICES}


def read_registry() -> dict:
    import tensorflow as tf
    from tensorflow.python.framework import kernels
    from tensorflow.python.util import pywrap_xla_ops

    pywrap_xla_ops.get_gpu_kernel_names()
    registered = kernels.get_all_registered_kernels().kernel
    devices: dict[str, dict[str, list]] = {}
    for device, backend in BACKENDS.items():
        ops: dict[str, list] = {}
        for kernel in registered:
            if kernel.device_type != backend:
                continue
            constraints = {
                c.name: sorted(tf.as_dtype(t).name for t in c.allowed_values.list.type)
                for c in kernel.constraint
            }
            ops.setdefault(kernel.op, []).append(constraints)
        if not ops:
            raise RuntimeError(f"no {backend} kernels registered: was something compiled first?")
        devices[device] = dict(sorted(ops.items()))
    return {"tensorflow": tf.__version__, "devices": devices}


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(read_registry(), out, indent=1, sort_keys=True)
