"""Keras' jit_compile decision for one traced entry on the target device (no TensorFlow here).

The worker records, for every compiled Keras model, what Keras decides on each device
(``xlalint.backend.keras_step.jit_decisions``); everything after tracing reads it through here.
"""

from __future__ import annotations

from typing import Any

from xlalint.core.wire import EntryRecord

FIT_SUFFIX = ".fit"  # the train-step entry of a model is named MODEL.fit


def decision(raw: EntryRecord, device: str) -> dict[str, Any] | None:
    """``{"model", "requested", "compile", "jit", "reason", "layer", "supported"}`` for a compiled Keras model's entry, else None."""
    keras = raw.get("keras")
    if not keras:
        return None
    model = {"keras-fit": raw["name"][: -len(FIT_SUFFIX)],  # a checked file's MODEL.fit
             "keras-step": raw["name"].rpartition(".")[0]}.get(raw.get("kind", ""), raw["name"])  # a run's Class.step
    return {"model": model, "requested": keras["requested"], "compile": keras.get("compile"),
            **keras["devices"][device]}


def jit_setting(raw: EntryRecord, device: str) -> bool | None:
    """Whether the entry runs under jit_compile: Keras' decision for a compiled model, else its tf.function's."""
    decided = decision(raw, device)
    return decided["jit"] if decided is not None else raw.get("jit_compile")


def refuses_jit(raw: EntryRecord, device: str) -> bool:
    """Keras would turn jit_compile=True off for this entry's model on ``device`` (a layer, op determinism...)."""
    decided = decision(raw, device)
    return decided is not None and not decided["supported"]


def kept_off(raw: EntryRecord, device: str) -> str | None:
    """Why Keras runs this entry's model without XLA on ``device``, or None."""
    decided = decision(raw, device)
    return decided["reason"] if decided is not None and not decided["jit"] else None
