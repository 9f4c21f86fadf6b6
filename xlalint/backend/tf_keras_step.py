"""The step tf-keras (Keras 2) compiles for ``fit``, and tf-keras's own ``jit_compile`` decision.

tf-keras (``tf_keras/src/engine/training.py``, 2.16 to 2.21) builds ``fit``'s function in
``make_train_function``: a ``run_step`` that calls ``model.train_step(data)`` (the forward pass, the
compiled loss, the optimizer update, or the user's own ``train_step``), wrapped in
``tf.function(run_step, jit_compile=True)`` only when ``model.jit_compile`` is true, inside a plain
``tf.function`` (AutoGraph on) that takes the data iterator. Its decision differs from Keras 3's: no
``"auto"``, no layer that refuses XLA; ``compile(jit_compile=None)``, its default, keeps XLA off on every
device; ``compile`` itself turns a requested ``True`` off where ``tf_utils.can_jit_compile`` says no (Apple
silicon, pluggable devices) and refuses it with ``run_eagerly=True``. So the model's own ``jit_compile``,
read after ``compile``, is the decision on any target device.

tf-keras is imported by the user (``import tf_keras``, or ``tf.keras`` under ``TF_USE_LEGACY_KERAS=1``),
never here: its classes are found in ``sys.modules``.
"""

from __future__ import annotations

import sys

import tensorflow as tf

from xlalint.backend.discover import Candidate
from xlalint.backend.keras_step import targets_of
from xlalint.core.support import DEVICES


def model_class() -> type | None:
    """tf-keras's ``Model``, once the user imported tf-keras; else None."""
    return getattr(sys.modules.get("tf_keras"), "Model", None)


def is_model(model) -> bool:
    cls = model_class()
    return cls is not None and isinstance(model, cls)


def is_compiled(model) -> bool:
    """A tf-keras model on which ``compile()`` was called: ``fit`` would build its train step."""
    return is_model(model) and bool(getattr(model, "_is_compiled", False))


def jit_decisions(model) -> dict:
    """The decision in the shape of Keras 3's (``keras_step.jit_decisions``): the same on every device."""
    requested = getattr(model, "_jit_compile", None)
    if getattr(model, "run_eagerly", False):
        jit, reason = False, "it runs eagerly (run_eagerly=True)"
    elif requested is None:
        jit, reason = False, "tf-keras compiles the train step with XLA only with jit_compile=True (its default is off)"
    elif not requested:
        jit, reason = False, "it is compiled with jit_compile=False"
    else:
        jit, reason = True, None
    decided = {"jit": jit, "reason": reason, "supported": True, "layer": None}
    return {"requested": bool(requested), "devices": {device: dict(decided) for device in DEVICES}, "compile": None}


def train_step_candidate(name: str, model, line: int, inputs) -> Candidate:
    """The entry ``NAME.fit``: tf-keras's own ``train_step`` of a compiled ``model`` on ``inputs`` and targets
    derived from its loss and outputs, with tf-keras's decision in ``candidate.keras``."""
    entry = f"{name}.fit"
    decisions = jit_decisions(model)
    try:
        outputs = model.compute_output_signature(inputs)
        data = (inputs, targets_of(model, outputs))
    except Exception as error:  # the user's model: not knowing its outputs is a finding
        return Candidate(entry, line, "keras-fit", legacy_model=model, keras=decisions,
                         reason=f"tf-keras' train step of `{name}` could not be built: {type(error).__name__}: {error}")

    def fit(*flat):
        return model.train_step(tf.nest.pack_sequence_as(data, flat))

    fit.__name__ = fit.__qualname__ = f"{name.replace('.', '_')}_fit"
    return Candidate(entry, line, "keras-fit", function=tf.function(fit), python_function=fit,
                     specs=tf.nest.flatten(data), legacy_model=model, keras=decisions)
