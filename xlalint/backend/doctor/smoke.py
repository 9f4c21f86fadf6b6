"""The doctor's smoke test: does XLA compile and run here, and does it agree with TensorFlow?

``python -m xlalint.backend.doctor.smoke cpu|gpu`` prints one JSON object. The caller
runs it in a fresh interpreter with the user's ``TF_XLA_FLAGS`` / ``XLA_FLAGS`` plus the
flags that turn auto-clustering on, so a bad flag aborts this child, not the doctor.
Two small functions run on the device: one with ``jit_compile=True`` and one left to
auto-clustering, each against the same function kept out of XLA with
``jit_scope(compile_ops=False)``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import tensorflow as tf

from xlalint.backend.verify.compare import compare, compilations, median_seconds

RUNS = 20


def body(x, w):
    # Six ops, above the auto-clustering minimum of four; MatMul feeds tanh, not BiasAdd+Relu,
    # so Grappler's _FusedMatMul does not take it out of the cluster.
    return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * 2.0 + 1.0, axis=1)


def without_xla(x, w):
    with tf.xla.experimental.jit_scope(compile_ops=False):
        return body(x, w)


def measure(xla, inputs, device: str, reference) -> dict:
    """Cold compile, warm step, agreement and executables built for one XLA function."""
    result: dict[str, Any] = {"ran": False, "compile_s": None, "step_s": None, "allclose": None,
              "max_abs_diff": None, "compilations": None, "error": None}
    try:
        with compilations(device) as built:
            start = time.perf_counter()
            got = xla(*inputs).numpy()
            result["compile_s"] = time.perf_counter() - start
            result["step_s"] = median_seconds(xla, inputs, RUNS)
        result["compilations"] = built["count"]
    except Exception as error:  # the compiler's or runtime's answer is the finding
        result["error"] = f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"
        return result
    result["ran"] = True
    result["allclose"], result["max_abs_diff"] = compare([got], [reference], 1.0)
    return result


def smoke(kind: str) -> dict:
    device = f"{kind.upper()}:0"
    if not tf.config.list_logical_devices(kind.upper()):
        return {"device": device, "error": f"no {kind.upper()} visible to TensorFlow"}
    with tf.device(f"/{device}"):
        inputs = (tf.random.stateless_normal([64, 128], seed=[1, 2]),
                  tf.random.stateless_normal([128, 64], seed=[3, 4]))
        plain = tf.function(without_xla)
        reference = plain(*inputs).numpy()
        return {
            "device": device,
            "tf_step_s": median_seconds(plain, inputs, RUNS),
            "jit_compile": measure(tf.function(body, jit_compile=True), inputs, device, reference),
            "autocluster": measure(tf.function(body), inputs, device, reference),
        }


if __name__ == "__main__":
    print(json.dumps(smoke(sys.argv[1])))
