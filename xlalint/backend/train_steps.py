"""The train step ``fit`` compiles for each compiled model a file defines: Keras 3's (``keras_step``) or
tf-keras's (``tf_keras_step``), each judged with its own library's ``jit_compile`` decision."""

from __future__ import annotations

from xlalint.backend import keras_step, tf_keras_step
from xlalint.backend.discover import Candidate


def with_train_steps(candidates: list[Candidate], site_of, compiled: dict) -> list[Candidate]:
    """``candidates`` with, after each compiled Keras or tf-keras model, the train step ``fit`` compiles for it;
    both carry the library's jit_compile decisions."""
    found = []
    for candidate in candidates:
        found.append(candidate)
        step = None
        if candidate.model is not None and keras_step.is_compiled(candidate.model):
            step = keras_step.train_step_candidate(candidate.name, candidate.model, candidate.line, candidate.inputs,
                                                   site_of, compiled) if candidate.inputs is not None else None
            candidate.keras = step.keras if step else keras_step.jit_decisions(candidate.model, compiled, site_of)
        elif tf_keras_step.is_compiled(candidate.legacy_model):
            step = tf_keras_step.train_step_candidate(candidate.name, candidate.legacy_model, candidate.line,
                                                      candidate.inputs) if candidate.inputs is not None else None
            candidate.keras = tf_keras_step.jit_decisions(candidate.legacy_model)
        if step:
            found.append(step)
    return found
