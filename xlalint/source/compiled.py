"""Which functions of a file are compiled, as far as the source shows.

Those under ``@tf.function`` (any arguments), module functions passed to ``tf.function(fn, ...)``
or ``tf.function(...)(fn)``, and the ``train_step``/``test_step``/``predict_step``/``call`` methods
of Keras Model/Layer subclasses (direct, or through a subclass in the same file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from xlalint.source.syntax import dotted, keyword

if TYPE_CHECKING:
    from xlalint.source.index import Aliases, Def, Index

TF_FUNCTION = frozenset({"tf.function", "tf.compat.v1.function"})
KERAS_METHODS = frozenset({"train_step", "test_step", "predict_step", "call"})
KERAS_BASES = frozenset({"keras.Model", "keras.Sequential", "keras.Layer", "keras.models.Model",
                         "keras.models.Sequential", "keras.layers.Layer"})
KERAS_PREFIXES = ("tensorflow.keras.", "tensorflow.compat.v2.keras.", "tf_keras.")


@dataclass(frozen=True)
class Compiled:
    definition: Def
    kind: str  # "tf.function" | "keras"
    jit: bool  # jit_compile=True (or experimental_compile=True) is set
    decorator: cst.BaseExpression | None = None  # its @tf.function(...), when it has one


def is_tf_function(aliases: Aliases, expr) -> bool:
    """``tf.function`` itself, or a call of it (``tf.function(...)``), as the file's imports name it
    (``import tensorflow as tf``, ``from tensorflow import function``...)."""
    return aliases.tf_api(expr.func if isinstance(expr, cst.Call) else expr) in TF_FUNCTION


def jit(expr) -> bool:
    """Whether the tf.function call ``expr`` sets ``jit_compile=True`` (or its old name)."""
    return isinstance(expr, cst.Call) and any(
        keyword(a) in ("jit_compile", "experimental_compile") and isinstance(a.value, cst.Name)
        and a.value.value == "True" for a in expr.args)


def _is_keras_base(aliases: Aliases, expr) -> bool:
    qualified = aliases.qualify(expr) or ""
    for prefix in KERAS_PREFIXES:
        if qualified.startswith(prefix):
            qualified = "keras." + qualified[len(prefix):]
    return qualified in KERAS_BASES


def find_compiled(index: Index) -> list[Compiled]:
    """Every compiled function of the file ``index`` describes, in file order."""
    aliases = index.aliases
    found: dict[str, Compiled] = {}
    keras: set[str] = set()
    for name, node in index.classes:
        if any(_is_keras_base(aliases, b.value) or dotted(b.value) in keras for b in node.bases):
            keras.add(name)
    for d in index.defs:
        decorator = next((dec.decorator for dec in d.node.decorators if is_tf_function(aliases, dec.decorator)),
                         None)
        if decorator is not None:
            found[d.name] = Compiled(d, "tf.function", jit(decorator), decorator)
        elif d.cls in keras and d.node.name.value in KERAS_METHODS:
            found[d.name] = Compiled(d, "keras", False)
    for site in index.calls:  # fast = tf.function(fn, ...) or tf.function(...)(fn)
        call = site.node
        wrapper = next((c for c in (call, call.func) if isinstance(c, cst.Call) and is_tf_function(aliases, c)),
                       None)
        target = index.wrapped(call) if wrapper is not None else None
        if target is not None and target.name not in found:
            found[target.name] = Compiled(target, "tf.function", jit(wrapper))
    order = {d.name: i for i, d in enumerate(index.defs)}
    return sorted(found.values(), key=lambda c: order[c.definition.name])
