"""Ask the real XLA compiler (on CPU) the questions xlalint answers statically.

Used only by the tests. Entry points of an example file are its module-level
``tf.function``s with an ``input_signature``; arguments are made from the
signature (unknown dims filled in), and ``variant`` changes integer values and
unknown dims so that value- or shape-specialization shows up.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from marks import expected  # noqa: F401 - re-exported for the tests
from xlalint.backend.verify.compare import counts_executables

# Whether this release's profiler shows each executable XLA:CPU builds (not on 2.16 and 2.17): the count is
# the compiler evidence of several tests, which are skipped without it.
COUNTED = counts_executables("CPU")
NOT_COUNTED = f"TensorFlow {tf.__version__}'s XLA:CPU builds leave no profiler event: executables are not counted"


def skip_without_counts() -> None:
    if not COUNTED:
        import pytest

        pytest.skip(NOT_COUNTED)

def load_module(path: Path):
    name = f"_groundtruth_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def entries(module) -> dict:
    return {
        name: obj
        for name, obj in vars(module).items()
        if isinstance(obj, tf.types.experimental.GenericFunction) and obj.input_signature is not None
    }


def tracing_counts(module) -> dict[str, int]:
    """Run the module's ``run()``, then how often each of its tf.functions was traced (= compiled under XLA)."""
    module.run()
    return {name: obj.experimental_get_tracing_count() for name, obj in vars(module).items()
            if isinstance(obj, tf.types.experimental.GenericFunction)}


def keras_models(module) -> dict:
    """Module-level Keras models, and the model a zero-argument ``build_model()`` returns."""
    models = {name: obj for name, obj in vars(module).items() if isinstance(obj, keras.Model)}
    if callable(getattr(module, "build_model", None)):
        models["build_model"] = module.build_model()
    return models


def model_entries(module) -> dict:
    """Each Keras model's forward pass as a tf.function with its inputs as signature."""
    def forward(model):
        specs = [tf.TensorSpec(t.shape, t.dtype) for t in model.inputs]
        return tf.function(lambda *xs: model(xs[0] if len(xs) == 1 else list(xs), training=False),
                           input_signature=specs)

    return {name: forward(model) for name, model in keras_models(module).items()}


def keras_keeps_xla(model) -> bool:
    """Whether Keras still compiles ``model`` with XLA after ``compile(jit_compile=True)``."""
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    return model.jit_compile is True


def compiled_models(module) -> dict:
    """The module's Keras models that were compiled (``fit`` would build their train step)."""
    return {name: model for name, model in keras_models(module).items() if model.compiled}


def sample_batch(model, batch: int = 4) -> tuple:
    """``(x, y)``, one batch for ``fit``: inputs of the model's own specs, targets of its outputs'
    shapes (integer class ids without the last axis for a sparse loss)."""
    rng = np.random.default_rng(0)

    def value(shape, dtype):
        shape = [batch, *shape[1:]]
        if dtype == "string":
            return tf.fill(shape, "a")  # fit takes strings as a tensor, not as a NumPy array
        if "int" in dtype:
            return rng.integers(0, 2, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)

    xs = [value(t.shape, t.dtype) for t in model.inputs]
    sparse = "sparse" in str(getattr(model, "loss", "")).lower()
    ys = [value(t.shape[:-1], "int32") if sparse else value(t.shape, t.dtype) for t in model.outputs]
    return (xs[0] if len(xs) == 1 else xs), (ys[0] if len(ys) == 1 else ys)


def make_args(fn, variant: int = 0) -> list:
    rng = np.random.default_rng(variant)
    args = []
    for spec in tf.nest.flatten(fn.input_signature):
        shape = [4 + variant if d is None else d for d in spec.shape.as_list()]
        if spec.dtype == tf.string:
            args.append(tf.fill(shape, "text"))
        elif spec.dtype == tf.bool:
            args.append(tf.constant(rng.random(shape) > 0.5))
        elif spec.dtype.is_integer:
            values = np.full(shape, 2 + variant) if not shape else rng.integers(0, 3, shape)
            args.append(tf.constant(values, dtype=spec.dtype))
        else:
            args.append(tf.constant(rng.standard_normal(shape), dtype=spec.dtype))
    return args


def _jit(fn):
    return tf.function(fn.python_function, jit_compile=True)


def compile_error(fn, variant: int = 0) -> str | None:
    """None when XLA compiles *and runs* ``fn`` on CPU, else the compiler's first message line."""
    args = make_args(fn, variant)
    try:
        with tf.device("/CPU:0"):
            jitted = _jit(fn)
            jitted.experimental_get_compiler_ir(*args)(stage="hlo")
            jitted(*args)
    except Exception as error:  # the compiler's verdict is the point
        return str(error).strip().splitlines()[0] or type(error).__name__
    return None


def xla_result_differs(fn, variant: int = 0) -> bool:
    """XLA compiles and runs ``fn`` on CPU but returns something else than TensorFlow without XLA
    (also: TensorFlow raises, e.g. a failing tf.debugging check, where XLA returns a result)."""
    args = make_args(fn, variant)
    with tf.device("/CPU:0"):
        compiled = tf.nest.flatten(_jit(fn)(*args))
        try:
            plain = tf.nest.flatten(tf.function(fn.python_function)(*args))
        except tf.errors.InvalidArgumentError:
            return True
    return any(a.shape != b.shape or not np.allclose(a.numpy(), b.numpy(), equal_nan=True)
               for a, b in zip(plain, compiled))


def lowers(fn, *args) -> bool:
    """Whether XLA lowers the plain callable ``fn`` on ``args`` to HLO on CPU (its refusal is the answer)."""
    try:
        with tf.device("/CPU:0"):
            tf.function(fn, jit_compile=True).experimental_get_compiler_ir(*args)(stage="hlo")
    except Exception:  # noqa: BLE001 - any refusal of the compiler counts
        return False
    return True


def hlo(fn, variant: int = 0) -> str:
    with tf.device("/CPU:0"):
        return _jit(fn).experimental_get_compiler_ir(*make_args(fn, variant))(stage="hlo")


def hlo_body(text: str) -> str:
    """HLO text without what differs between any two traces: the module line and numbered names."""
    lines = (line for line in text.splitlines() if not line.startswith("HloModule"))
    return re.sub(r"_\d+", "_N", "\n".join(lines))


def refuses_unknown_dims(fn) -> bool:
    """True when XLA will not compile from the signature alone (its shapes are not all known)."""
    try:
        _jit(fn).experimental_get_compiler_ir(*tf.nest.flatten(fn.input_signature))(stage="hlo")
    except Exception:
        return True
    return False
