"""Trace an object the caller already holds (a function, tf.function or Keras model), in this process."""

from __future__ import annotations

import inspect
import traceback
from typing import Any

import tensorflow as tf

from xlalint.backend.discover import Candidate, function_candidate, keras_model_classes, model_candidate
from xlalint.backend.frames import user_frames
from xlalint.backend.graph_export import export_graph
from xlalint.backend.keras_sites import LayerRecorder
from xlalint.core.specs import Spec, parse_spec
from xlalint.core.wire import EntryRecord, entry_record


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
    """``(raw entry with graph, source path, tensorflow version)`` for ``obj`` traced with ``specs``.

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
    else:
        candidate = function_candidate(name, obj, line, given)
        path = inspect.getsourcefile(getattr(obj, "python_function", obj)) or path
    if not candidate.traceable:
        raise ValueError(candidate.reason)
    with recorder.installed():
        concrete, num_args = candidate.trace()
    raw = entry_record(name, candidate.line, candidate.kind, candidate.jit_compile, candidate.signature,
                       graph=export_graph(concrete, num_args, recorder.layer_of))
    if verify:
        from xlalint.backend.verify.compare import verify_entry

        raw["verify"] = verify_entry(candidate, device=None if verify == "auto" else verify)
    return raw, path, tf.__version__
