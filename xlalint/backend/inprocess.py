"""Trace an object the caller already holds (a function, tf.function or Keras model), in this process."""

from __future__ import annotations

import inspect
import traceback
from typing import Any

import tensorflow as tf

from xlalint.backend.discover import Candidate, function_candidate, keras_model_classes, model_candidate
from xlalint.backend.frames import user_frames
from xlalint.backend.entry import traced_entry
from xlalint.backend.keras_sites import LayerRecorder
from xlalint.backend.keras_step import is_compiled, jit_decisions
from xlalint.core.specs import Spec, parse_spec
from xlalint.core.wire import EntryRecord


def _as_spec(value) -> Spec:
    """A Spec from a spec string, a tf.TensorSpec, or a concrete tensor/array (its dtype and shape)."""
    if isinstance(value, str):
        return parse_spec(value)
    if not isinstance(value, tf.TensorSpec):
        value = tf.TensorSpec.from_tensor(tf.convert_to_tensor(value))
    shape = None if value.shape.rank is None else tuple(value.shape.as_list())
    return Spec(value.dtype.name, shape)  # type: ignore[arg-type]  # None: unknown rank


def _caller_site() -> tuple[str, int]:
    """The innermost user frame on the stack: the line that called ``xlalint.check``."""
    frames = user_frames(traceback.extract_stack())
    return (frames[-1][0], frames[-1][1]) if frames else ("<unknown>", 1)


def trace_object(obj: Any, specs: tuple, verify: str | None = None) -> tuple[EntryRecord, str, str]:
    """``(raw entry with graph, source path, tensorflow version)`` for ``obj`` traced with ``specs``, built as
    the tracing server builds a file's entries (``backend/entry.py``): a Keras model with its layers that keep
    XLA off and, once compiled, Keras's ``jit_compile`` decisions. Raises ``ValueError`` where it cannot be traced.

    Layers of a model built before this call have no construction site: their ops are
    placed at the line that called ``check``, with the layer named in the message.
    ``verify`` ("auto", "cpu", "gpu") also compiles and runs it (``raw["verify"]``).
    """
    given = [_as_spec(s) for s in specs] or None
    name = str(getattr(obj, "name", None) or getattr(obj, "__name__", type(obj).__name__))
    path, line = _caller_site()
    recorder = LayerRecorder()
    if isinstance(obj, keras_model_classes()):
        candidate: Candidate = model_candidate(name, obj, line, given)
        model: Any = obj
        for layer in model._flatten_layers(include_self=False):  # noqa: SLF001 - every nested layer
            recorder.add_site(layer, path, line)
        if is_compiled(model):
            candidate.keras = jit_decisions(model, recorder.compiled, recorder.site_of)
    else:
        candidate = function_candidate(name, obj, line, given)
        path = inspect.getsourcefile(getattr(obj, "python_function", obj)) or path
    if not candidate.traceable:
        raise ValueError(candidate.reason)
    with recorder.installed():
        raw = traced_entry(candidate, recorder, verify={"device": None if verify == "auto" else verify} if verify
                           else None)
    if raw["graph"] is None:
        raise ValueError(raw["error"])
    return raw, path, tf.__version__
