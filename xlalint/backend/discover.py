"""Find what to trace in an imported user module, and trace it.

An entry is a module-level ``tf.function`` with an ``input_signature``, a
``tf.function`` method (with signature) of a module-level ``tf.Module`` or Keras
object, a module-level Keras model (Keras 3, tf-keras, transformers TF models), a
zero-argument function that builds one, a module-level ``tf.function(model)``
without signature (traced on the model's inputs), or anything named on the command
line together with specs. A ``tf.function`` without a signature that a traced entry
calls is part of that entry, not an entry of its own.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import keras
import tensorflow as tf

from xlalint.backend.one_trace import traced_once
from xlalint.core.specs import Spec
from xlalint.core.wire import EntryRecord

_BUILDER_NAME = re.compile(r"^((build|make|create|get|new)_?\w*model\w*|model_fn)$", re.IGNORECASE)


@dataclass
class Candidate:
    """Something traceable (``function`` with ``specs``), or a ``reason`` why it is not."""

    name: str
    line: int
    kind: str
    function: Any = None  # the tf.function to trace; None when not traceable
    python_function: Any = None  # the plain callable behind it (for compiling it ourselves)
    specs: list = field(default_factory=list)  # flat tf.TensorSpecs of the arguments
    use_signature: bool = False  # trace with the function's own input_signature
    reason: str | None = None
    jit_compile: bool | None = None
    model: object = None  # the Keras 3 model behind a keras-model/keras-builder entry
    legacy_model: object = None  # the tf-keras (Keras 2) model behind one
    helper: str | None = None  # a discovered tf.function without signature: the name its traces carry
    keras: dict | None = None  # a compiled Keras model's jit_compile decisions (keras_step.jit_decisions)
    inputs: object = None  # a Keras model's input specs in its own structure

    @property
    def traceable(self) -> bool:
        return self.function is not None

    @property
    def signature(self) -> list[dict]:
        return [spec_json(s) for s in self.specs]

    def trace(self):
        """``(concrete_function, number of arguments)``, traced as ``jit_compile=True`` traces it.

        Some lowerings depend on whether the graph is built for XLA: outside XLA, the gradient of
        a tf.cond carries branch intermediates in Optional* ops (no XLA kernel), inside it in
        zeros. A jit_compile=True twin makes the traced graph the one XLA is asked to compile; it is
        traced once, where TensorFlow traces a function that builds Keras variables twice (``one_trace``).
        """
        function = self.function
        python_function = getattr(function, "python_function", None)
        if python_function is not None:
            function = tf.function(traced_once(python_function), jit_compile=True, autograph=getattr(function, "_autograph", True),
                                   input_signature=function.input_signature if self.use_signature else None)
        args = () if self.use_signature else self.specs
        return function.get_concrete_function(*args), len(self.specs)


def _main_block_reach(source: str) -> set[str]:
    """The module-level names the ``if __name__ == "__main__":`` block may reach: every name it uses, and
    when it calls a function of the module (``main()``), every name of the module."""
    tree = ast.parse(source)
    blocks = [node for node in tree.body if isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
              and len(node.test.comparators) == 1
              and {ast.unparse(node.test.left), ast.unparse(node.test.comparators[0])} == {"__name__", "'__main__'"}]
    used = {n.id for block in blocks for n in ast.walk(block) if isinstance(n, ast.Name)}
    functions = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return used | (functions if used & functions else set())


def _module_level_statements(body: list[ast.stmt]):
    """The statements that run at module level, those inside a ``with`` block too (``with strategy.scope():``)."""
    for node in body:
        if isinstance(node, (ast.With, ast.AsyncWith)):
            yield from _module_level_statements(node.body)
        else:
            yield node


def _module_level_lines(source: str) -> dict[str, int]:
    """Line of each module-level def, class or assignment (``def`` line, not decorator), also inside a
    module-level ``with`` block."""
    lines: dict[str, int] = {}
    for node in _module_level_statements(ast.parse(source).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines[node.name] = node.lineno
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        lines.setdefault(name.id, node.lineno)
    return lines


def _tensor_spec(spec: Spec) -> tf.TensorSpec:
    return tf.TensorSpec(spec.shape, tf.as_dtype(spec.dtype))


def spec_json(spec) -> dict[str, Any]:
    shape = None if spec.shape.rank is None else spec.shape.as_list()
    return {"dtype": spec.dtype.name, "shape": shape}


def _is_tf_function(obj) -> bool:
    return isinstance(obj, tf.types.experimental.GenericFunction)


def def_line(fn, default: int) -> int:
    try:
        source, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return default
    for offset, text in enumerate(source):
        if text.lstrip().startswith(("def ", "async def ")):
            return start + offset
    return start


def function_candidate(name: str, fn, line: int, specs: list[Spec] | None, from_main: bool = False) -> Candidate:
    """A tf.function or plain function; specs from the command line win over a signature. ``from_main``: the
    module's ``if __name__ == "__main__":`` block may call it (the import did not)."""
    is_tf = _is_tf_function(fn)
    jit = getattr(fn, "_jit_compile", None) if is_tf else None
    python_fn = getattr(fn, "python_function", fn)
    line = def_line(python_fn, line)
    kind = "tf.function" if is_tf else "function"
    if specs is not None:
        return Candidate(name, line, kind, function=fn if is_tf else tf.function(fn),
                         python_function=python_fn, specs=[_tensor_spec(s) for s in specs], jit_compile=jit)
    signature = getattr(fn, "input_signature", None) if is_tf else None
    if signature is None and from_main:
        return Candidate(name, line, kind, jit_compile=jit, reason=(
            f"{kind} `{name}` was not called while the module was imported: the `__main__` block runs under "
            "`xlalint run FILE` (or `run` in [tool.xlalint]), which checks it at its first call"))
    if signature is None:
        return Candidate(
            name, line, kind, jit_compile=jit,
            reason=f"{kind} `{name}` has no input_signature: add input_signature=[tf.TensorSpec(...)] "
            f"or name it with specs, e.g. `xlalint FILE::{name} --spec \"float32[8,16]\"`",
        )
    return Candidate(name, line, kind, function=fn, python_function=python_fn,
                     specs=tf.nest.flatten(signature), use_signature=True, jit_compile=jit)


def keras_model_classes() -> tuple[type, ...]:
    """Keras 3's Model, and tf-keras' (Keras 2, behind transformers' TF models) once the user imported it."""
    tf_keras_model = getattr(sys.modules.get("tf_keras"), "Model", None)
    return (keras.Model,) if tf_keras_model is None else (keras.Model, tf_keras_model)


def _arg_name(name: str | None) -> str | None:
    """``name`` as a graph argument name (TensorFlow accepts only some characters there)."""
    if not name:
        return None
    name = re.sub(r"[^A-Za-z0-9_.]", "_", name)
    return name if name[0].isalnum() else f"input{name}"


def _input_name(tensor) -> str | None:
    """The name of the Keras Input behind ``tensor`` (its layer's name, not a generated tensor name)."""
    history = getattr(tensor, "_keras_history", None)
    layer = getattr(history, "operation", None) or getattr(history, "layer", None)
    return _arg_name(getattr(layer, "name", None) or getattr(tensor, "name", None))


def _keras_inputs(model):
    """The model's Keras inputs in its own structure; a built Sequential knows only the flat list."""
    for attribute in ("input", "inputs"):
        try:
            inputs = getattr(model, attribute)
        except (AttributeError, ValueError):
            continue
        if isinstance(inputs, (list, tuple)) and len(inputs) <= 1 and attribute == "inputs":
            return inputs[0] if inputs else None
        if inputs is not None:
            return inputs
    return None


def _model_inputs(model):
    """The model's inputs as a structure of TensorSpecs named after its Inputs, or None when unknown.

    A functional model's own structure (one input, a list or a dict of them); for a model with
    ``dummy_inputs`` (transformers), their names, dtypes and sizes with a free batch dimension.
    """
    inputs = _keras_inputs(model)
    if inputs is not None:
        return tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype, name=_input_name(t)), inputs)
    try:
        dummies = getattr(model, "dummy_inputs", None)
    except Exception:  # a library's property: not knowing its inputs is the answer
        dummies = None
    if isinstance(dummies, dict) and dummies:
        return {key: tf.TensorSpec([None, *value.shape[1:]], value.dtype, name=_arg_name(key))
                for key, value in dummies.items()}
    return None


def _given_structure(structure, specs: list[Spec]):
    """Command-line specs in the model's own input structure (and names) when they match it in number."""
    given = [_tensor_spec(s) for s in specs]
    if structure is None or len(tf.nest.flatten(structure)) != len(given):
        return given[0] if len(given) == 1 else given
    names = [s.name for s in tf.nest.flatten(structure)]
    return tf.nest.pack_sequence_as(structure, [tf.TensorSpec(s.shape, s.dtype, name=n)
                                                for s, n in zip(given, names)])


def model_candidate(name: str, model, line: int, specs: list[Spec] | None) -> Candidate:
    """Forward pass of a Keras model (``training=False``) on inputs of its own structure, or given specs."""
    structure = _model_inputs(model)
    keras3 = model if isinstance(model, keras.Model) else None  # Keras 3's layer rules (XLA301) are its own
    legacy = None if keras3 is not None else model
    if specs is not None:
        structure = _given_structure(structure, specs)
    elif structure is None:
        return Candidate(
            name, line, "keras-model", model=keras3, legacy_model=legacy,
            reason=f"Keras model `{name}` has no known inputs (subclassed and not built): "
            f"give specs, e.g. `xlalint FILE::{name} --spec \"float32[8,32]\"`",
        )

    def forward(*xs):
        return model(tf.nest.pack_sequence_as(structure, xs), training=False)

    forward.__name__ = forward.__qualname__ = _arg_name(name) or "model"  # the traced function's name
    return Candidate(name, line, "keras-model", function=tf.function(forward), python_function=forward,
                     specs=tf.nest.flatten(structure), model=keras3, legacy_model=legacy, inputs=structure)


def _model_wrapper_candidate(name: str, function, model, line: int) -> Candidate:
    """``NAME = tf.function(model, jit_compile=...)``: the model's forward pass on its own inputs, under the
    wrapper's ``jit_compile`` (Keras decides nothing for it: no layers of its own to report)."""
    candidate = model_candidate(name, model, line, None)
    candidate.kind, candidate.model, candidate.inputs = "model-wrapper", None, None
    candidate.jit_compile = getattr(function, "_jit_compile", None)
    return candidate


def _method_candidates(name: str, obj, line: int) -> list[Candidate]:
    found = []
    for attr in sorted(vars(type(obj))):
        method = getattr(type(obj), attr, None)
        if _is_tf_function(method) and getattr(method, "input_signature", None) is not None:
            found.append(function_candidate(f"{name}.{attr}", getattr(obj, attr), line, None))
    return found


def _builds_model(fn) -> bool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
           for p in signature.parameters.values()):
        return False
    annotation = signature.return_annotation
    if annotation is not signature.empty:
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        return text.rsplit(".", 1)[-1] in ("Model", "Sequential", "Functional")
    return bool(_BUILDER_NAME.match(fn.__name__))


def _builder_candidate(name: str, fn, line: int) -> Candidate:
    try:
        model = fn()
    except Exception as error:  # the user's builder: any failure is a finding, not a crash
        return Candidate(name, line, "keras-builder", reason=f"`{name}()` raised {type(error).__name__}: {error}")
    if not isinstance(model, keras_model_classes()):
        return Candidate(name, line, "keras-builder", reason=f"`{name}()` did not return a Keras model")
    candidate = model_candidate(name, model, line, None)
    candidate.kind = "keras-builder"
    return candidate


def _resolve(module, dotted: str):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def discover(module, source: str, targets: dict[str, list[Spec] | None], find_all: bool) -> list[Candidate]:
    """The named ``targets`` of ``module``, plus every entry it defines when ``find_all``."""
    lines = _module_level_lines(source)
    found = _named(module, lines, targets)
    return found + _discovered(module, lines, set(targets), _main_block_reach(source)) if find_all else found


def _named(module, lines: dict[str, int], targets: dict[str, list[Spec] | None]) -> list[Candidate]:
    found = []
    models = keras_model_classes()
    for name, specs in targets.items():
        line = lines.get(name.split(".")[0], 1)
        try:
            obj = _resolve(module, name)
        except AttributeError:
            found.append(Candidate(name, line, "function", reason=f"`{name}` is not defined in this file"))
            continue
        if isinstance(obj, models):
            found.append(model_candidate(name, obj, line, specs))
        elif not specs and inspect.isfunction(obj) and _builds_model(obj):
            found.append(_builder_candidate(name, obj, line))
        elif callable(obj):
            found.append(function_candidate(name, obj, line, specs))
        else:
            found.append(Candidate(name, line, "function", reason=f"`{name}` is not a function or model"))
    return found


def _discovered(module, lines: dict[str, int], skip: set[str], from_main: set[str]) -> list[Candidate]:
    found = []
    models = keras_model_classes()
    for name, line in lines.items():
        if name in skip:
            continue
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj) or inspect.isclass(obj):
            continue
        wrapped = getattr(obj, "python_function", None) if _is_tf_function(obj) else None
        if isinstance(wrapped, models) and getattr(obj, "input_signature", None) is None:
            found.append(_model_wrapper_candidate(name, obj, wrapped, line))
        elif _is_tf_function(obj):
            candidate = function_candidate(name, obj, line, None, name in from_main)
            if not candidate.traceable:
                candidate.helper = getattr(obj, "name", None) or name
            found.append(candidate)
        elif isinstance(obj, models):
            found.append(model_candidate(name, obj, line, None))
            found.extend(_method_candidates(name, obj, line))
        elif isinstance(obj, tf.Module):
            found.extend(_method_candidates(name, obj, line))
        elif inspect.isfunction(obj) and obj.__module__ == module.__name__ and _builds_model(obj):
            found.append(_builder_candidate(name, obj, line))
    return found


def without_called_helpers(candidates: list[Candidate], entries: list[EntryRecord],
                           captured: list[EntryRecord]) -> list[EntryRecord]:
    """The ``entries`` (one per candidate) less each signature-less tf.function that a traced or
    ``captured`` entry calls: it was traced with its caller's arguments and checked as part of that entry."""
    called = {name for entry in entries + captured if (graph := entry.get("graph")) for name in graph["functions"]}
    return [entry for candidate, entry in zip(candidates, entries, strict=True)
            if not (candidate.helper and any(re.fullmatch(rf"__inference_{re.escape(candidate.helper)}_\d+", name)
                                             for name in called))]

