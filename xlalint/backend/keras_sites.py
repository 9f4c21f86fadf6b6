"""Record where Keras layers are built, which graph ops each layer call makes, which layers and
models a trace called, and the ``jit_compile`` each model was compiled with.

Ops of a functional model carry only the ``model(x)`` line in their traceback.
Installing these hooks before the user's module is imported gives each op the
layer that made it and the user line that constructed that layer. ``Model.compile``
keeps only its resolved ``jit_compile``; the hook keeps what the user asked for ("auto" too).
A layer or model class of the user's own whose ``__init__`` (or ``compile``) calls ``super()``
is placed where the object is made (or compiled), not at that ``super()`` line.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from dataclasses import dataclass
from types import FrameType

from xlalint.backend.frames import is_user_file, realpath
from xlalint.backend.keras_jit import CUDNN_KERNEL, runs_cudnn_on_gpu


@dataclass(frozen=True)
class LayerSite:
    name: str
    cls: str
    file: str
    line: int
    user_code: bool  # the layer runs the user's own code (a Lambda or a layer class of theirs)
    gpu_kernel: str | None  # the op Keras runs instead on a GPU (cuDNN), which this CPU trace cannot show
    # the first op one call of a built-in layer made: its traceback gives the user's line of that call (the
    # export reads it once per call, not per op, as the layer record's ``called_at``)
    first_op: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "class": self.cls, "file": self.file, "line": self.line,
                "user_code": self.user_code, "gpu_kernel": self.gpu_kernel, "called_at": None}


def _runs_user_code(layer) -> bool:
    import keras

    if isinstance(layer, keras.layers.Lambda):
        return True
    try:
        return is_user_file(inspect.getsourcefile(type(layer)) or "")
    except TypeError:
        return False


def _wrapped(fn):
    """``fn`` and each function it wraps (``functools.wraps`` decorators)."""
    while fn is not None:
        yield fn
        fn = getattr(fn, "__wrapped__", None)


def _own_code(cls: type, method: str) -> frozenset:
    """The code of ``method`` in each class of ``cls``'s hierarchy, its decorators' wrappers included."""
    found = (fn for klass in cls.__mro__ for fn in _wrapped(vars(klass).get(method)))
    return frozenset(code for code in (getattr(fn, "__code__", None) for fn in found) if code is not None)


def user_call_site(obj, method: str) -> tuple[str, int] | None:
    """The user's ``(file, line)`` that called ``method`` on ``obj``: the innermost user frame on the
    stack that is not ``obj``'s own ``method`` (a subclass's override reaching the hook through
    ``super()``), so a layer is placed at ``MyLayer(...)``, not inside ``MyLayer.__init__``."""
    own = _own_code(type(obj), method)
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if is_user_file(code.co_filename) and not (code in own and _first_argument(frame) is obj):
            return realpath(code.co_filename), frame.f_lineno
        frame = frame.f_back
    return None


def _first_argument(frame: FrameType):
    """The first positional argument a frame's function was called with (``self``), also through ``*args``."""
    code, local = frame.f_code, frame.f_locals
    if code.co_argcount:
        return local.get(code.co_varnames[0])
    if code.co_flags & inspect.CO_VARARGS:
        rest = local.get(code.co_varnames[code.co_kwonlyargcount])  # *args follows the keyword-only names
        return rest[0] if isinstance(rest, tuple) and rest else None
    return None


class LayerRecorder:
    """Hooks ``keras.layers.Layer`` to map layers to sites and graph ops to layers."""

    def __init__(self) -> None:
        self._sites: dict[int, tuple[str, int]] = {}
        self._op_layer: dict[tuple[int, str], LayerSite] = {}
        self._layers: list = []  # keeps recorded layers and models alive so ids stay unique
        self.compiled: dict[int, tuple] = {}  # id(model) -> (jit_compile passed to compile(), user file, line)
        self.called: set[int] = set()  # ids of the recorded layers and models called in graph mode (since cleared)

    def add_site(self, layer, file: str, line: int) -> None:
        """Record a site for a layer built before the hooks were installed."""
        self._sites.setdefault(id(layer), (file, line))
        self._layers.append(layer)

    @contextlib.contextmanager
    def installed(self):
        """The hooks for the duration of a ``with`` block (in-process use), then the originals."""
        import keras

        layer_cls = keras.layers.Layer
        originals = layer_cls.__init__, layer_cls.__call__, keras.Model.compile
        self.install()
        try:
            yield self
        finally:
            layer_cls.__init__, layer_cls.__call__, keras.Model.compile = originals

    def install(self) -> None:
        import keras
        import tensorflow as tf

        layer_cls = keras.layers.Layer
        original_init, original_call = layer_cls.__init__, layer_cls.__call__
        recorder = self

        def init(layer, *args, **kwargs):
            original_init(layer, *args, **kwargs)
            if id(layer) not in recorder._sites:
                site = user_call_site(layer, "__init__")
                if site:
                    recorder._sites[id(layer)] = site
                    recorder._layers.append(layer)

        def call(layer, *args, **kwargs):
            if tf.executing_eagerly() or id(layer) not in recorder._sites:
                return original_call(layer, *args, **kwargs)
            recorder.called.add(id(layer))
            graph = tf.compat.v1.get_default_graph()
            before = len(graph.get_operations())
            result = original_call(layer, *args, **kwargs)
            file, line = recorder._sites[id(layer)]
            made = graph.get_operations()[before:]
            user_code = _runs_user_code(layer)
            site = LayerSite(layer.name, type(layer).__name__, file, line, user_code,
                             CUDNN_KERNEL if runs_cudnn_on_gpu(layer) else None,
                             made[0].name if made and not user_code else None)
            for op in made:
                recorder._op_layer.setdefault((id(graph), op.name), site)
            return result

        original_compile = keras.Model.compile

        def compile_model(model, *args, **kwargs):
            file, line = user_call_site(model, "compile") or (None, None)
            recorder.compiled[id(model)] = (args[7] if len(args) > 7 else kwargs.get("jit_compile", "auto"), file, line)
            recorder._layers.append(model)
            return original_compile(model, *args, **kwargs)

        layer_cls.__init__, layer_cls.__call__ = init, call
        keras.Model.compile = compile_model

    def site_of(self, layer) -> tuple[str, int] | None:
        """The user's ``(file, line)`` that constructed ``layer``."""
        return self._sites.get(id(layer))

    def layer_of(self, graph, op_name: str) -> LayerSite | None:
        return self._op_layer.get((id(graph), op_name))
