"""One entry's XLA facts on the target device, derived once from its record (no TensorFlow here).

The worker records, for every compiled Keras model, what Keras decides on each device
(``xlalint.backend.keras_step.jit_decisions``); ``entry_facts`` reads it, with the XLA mode the
program runs the entry in, and everything after tracing reads the entry's ``EntryFacts``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from xlalint.autocluster.program import AUTO_CLUSTERING, Mode, entry_mode
from xlalint.core.wire import EntryRecord
from xlalint.settings.table import Options

FIT_SUFFIX = ".fit"  # the train-step entry of a model is named MODEL.fit


@dataclass(frozen=True)
class EntryFacts:
    """How the program runs one entry on the target device, and what Keras decides for it."""

    mode: Mode  # the XLA mode its program runs it in (xlalint.autocluster.program)
    # a compiled Keras model's: {"model", "requested", "compile", "jit", "reason", "layer", "supported"}
    keras: dict[str, Any] | None
    jit_compile: bool | None  # whether it runs under jit_compile: Keras' decision for a model, else its tf.function's
    xla_off: str | None  # why Keras runs its model without XLA
    variable_devices: list[str] | None = None  # the devices of the variables it reads, where several (XLA305)

    def fields(self) -> dict:
        """Its report row's XLA fields (``core.results.Entry``)."""
        return {"jit_compile": self.jit_compile, "xla_off": self.xla_off,
                "keras_refuses_jit": self.keras is not None and not self.keras["supported"],
                "variable_devices": self.variable_devices, **self.mode.fields()}

    def for_rules(self, options: Options) -> Options:
        """The options its rules see: its mode as the program runs it (their fixes follow it)."""
        return replace(options, mode="autocluster" if self.mode.name == AUTO_CLUSTERING else "jit")


def entry_facts(raw: EntryRecord, path: str, options: Options) -> EntryFacts:
    """The facts of an entry found in ``path``: Keras' decision, the jit setting it makes, then the mode (as
    the program's files show it, or its run: ``xlalint run``)."""
    keras = _decision(raw, options.device)
    jit = keras["jit"] if keras is not None else raw.get("jit_compile")
    off = (keras["reason"] if not keras["jit"] else None) if keras is not None else _layer_off(raw, options.device)
    return EntryFacts(entry_mode(path, jit, options.mode, options.device, raw.get("seen_mode")), keras, jit, off,
                      raw.get("resource_devices"))


def _layer_off(raw: EntryRecord, device: str) -> str | None:
    """Why Keras runs a model the file does not compile without XLA on ``device``: a layer of it that does not
    support XLA there (XLA301). Keras resolves an uncompiled model's ``jit_compile`` as ``"auto"`` when it first
    predicts or evaluates, and ``model_supports_jit`` says no for the whole model."""
    layer = next((layer for layer in raw.get("keras_layers", ()) if device in layer["devices"]), None)
    return None if layer is None else (f"Keras keeps XLA off: its layer `{layer['name']}` ({layer['class']}) "
                                       "does not support XLA")


def _decision(raw: EntryRecord, device: str) -> dict[str, Any] | None:
    keras = raw.get("keras")
    if not keras:
        return None
    model = {"keras-fit": raw["name"][: -len(FIT_SUFFIX)],  # a checked file's MODEL.fit
             "keras-step": raw["name"].rpartition(".")[0]}.get(raw.get("kind", ""), raw["name"])  # a run's Class.step
    return {"model": model, "requested": keras["requested"], "compile": keras.get("compile"),
            **keras["devices"][device]}
