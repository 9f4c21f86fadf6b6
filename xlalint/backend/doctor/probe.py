"""What the installed TensorFlow says about XLA, as JSON on stdout (for ``xlalint doctor``).

Run in a fresh process: ``python -m xlalint.backend.doctor.probe`` prints the build,
the devices, the XLA JIT kernel registrations, ``tf.config.optimizer.get_jit()`` and
Keras' ``jit_compile`` default. ``python -m xlalint.backend.doctor.probe first-op`` only
runs one small ``jit_compile=True`` function: the caller sets ``TF_XLA_FLAGS`` or
``XLA_FLAGS`` to ``--help`` and reads the flag list TensorFlow prints before it aborts.
"""

from __future__ import annotations

import json
import os
import sys

JIT_BACKENDS = ("XLA_CPU_JIT", "XLA_GPU_JIT")


def jit_kernel_counts() -> dict:
    """XLA kernels registered per JIT backend (call first: kernels register lazily)."""
    from tensorflow.python.framework import kernels
    from tensorflow.python.util import pywrap_xla_ops

    pywrap_xla_ops.get_gpu_kernel_names()
    counts = dict.fromkeys(JIT_BACKENDS, 0)
    for kernel in kernels.get_all_registered_kernels().kernel:
        if kernel.device_type in counts:
            counts[kernel.device_type] += 1
    return counts


def gpus() -> list[dict]:
    import tensorflow as tf

    found = []
    for device in tf.config.list_physical_devices("GPU"):
        details = tf.config.experimental.get_device_details(device)
        capability = details.get("compute_capability")
        found.append({"name": device.name, "device_name": details.get("device_name"),
                      "compute_capability": list(capability) if capability else None})
    return found


def keras_jit_default() -> object:
    """What ``model.compile()`` picks for ``jit_compile`` here (Keras resolves "auto" per machine)."""
    try:
        import keras

        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        return model.jit_compile
    except Exception as error:  # Keras missing or broken: say so, the rest still answers
        return f"unknown ({type(error).__name__}: {error})"


def probe() -> dict:
    counts = jit_kernel_counts()
    import tensorflow as tf

    build = {k: (v if isinstance(v, (bool, int, str)) else str(v)) for k, v in tf.sysconfig.get_build_info().items()}
    return {
        "tensorflow": tf.__version__,
        "tensorflow_dir": os.path.dirname(tf.__file__),
        "build": build,
        "jit_kernels": counts,
        "gpus": gpus(),
        "xla_devices": [d.name for d in tf.config.list_logical_devices() if "XLA_" in d.device_type],
        "get_jit": tf.config.optimizer.get_jit(),
        "keras_jit_compile": keras_jit_default(),
    }


def first_op() -> None:
    import tensorflow as tf

    tf.function(lambda x: x * 2.0, jit_compile=True)(tf.constant(1.0)).numpy()


if __name__ == "__main__":
    if sys.argv[1:] == ["first-op"]:
        first_op()
    else:
        print(json.dumps(probe()))
