"""Run an example that sets ``TF_XLA_FLAGS`` in a process of its own, as its user would.

``python tests/flags_probe.py FILE [OLD NEW]`` runs FILE (which sets the flags and imports
TensorFlow), optionally replaces OLD by NEW in the flags it set, then calls each of its
entries once and prints JSON: the flags, the XLA devices and, per entry, the XLA executables
built (counted as ``--verify`` counts them). ``--tf_xla_cpu_global_jit`` is added so that
auto-clustering may take ops placed on the CPU. TensorFlow reads the flags at its first use,
not at import, so changes made here still count.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from types import SimpleNamespace


def main(path: str, old: str = "", new: str = "") -> dict:
    module = SimpleNamespace(**runpy.run_path(path))
    flags = os.environ.get("TF_XLA_FLAGS", "").replace(old, new) if old else os.environ.get("TF_XLA_FLAGS", "")
    os.environ["TF_XLA_FLAGS"] = f"{flags} --tf_xla_cpu_global_jit"
    import groundtruth as gt
    import tensorflow as tf
    from xlalint.backend.verify.compare import compilations

    built = {}
    for name, fn in gt.entries(module).items():
        with tf.device("/CPU:0"), compilations("CPU") as counted:
            fn(*gt.make_args(fn))
        built[name] = counted["count"]
    return {"flags": os.environ["TF_XLA_FLAGS"], "built": built,
            "xla_devices": [d.name for d in tf.config.list_logical_devices() if d.device_type.startswith("XLA_")]}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
