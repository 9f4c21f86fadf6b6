"""Trace a training step once: the Keras variables its first call builds are made eagerly.

A ``tf.function`` whose first call creates variables (an optimizer's slots on the first
``apply_gradients``, a lazily built layer's weights, a metric's totals) is traced twice by
TensorFlow: once to create them (each behind a ``tf.cond`` on whether it is initialized), then
again, with the variables in place, for the graph it runs and XLA compiles. Making those
variables eagerly at the moment the first trace asks for them (``tf.init_scope``) leaves nothing
for the second trace to change: TensorFlow keeps the first, which is the graph the second would
have built (the same ops, tested against TensorFlow's own trace).

Only variables that Keras makes for an object that existed before the trace are made this way:
Keras builds each of those once. A variable made by the user's code (``tf.Variable``) or for a
Keras object constructed inside the function goes to TensorFlow's own path, so a function that
would make new variables at every call still fails as it does under TensorFlow.

Discovery traces a twin of an entry over ``traced_once(python_function)``; ``xlalint run`` traces the
script's own ``tf.function`` inside ``keras_variables_made_eagerly()``, so TensorFlow keeps that one
trace for the script's real calls.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import weakref

import keras
import tensorflow as tf
from tensorflow.python.ops.resource_variable_ops import ResourceVariable

_OWNERS = (keras.layers.Layer, keras.optimizers.Optimizer, keras.metrics.Metric)
_SEARCH_DEPTH = 16  # frames from the variable creator up to the Keras object that asked for it


def _owner(frame):
    """The Keras layer, optimizer or metric whose method made this Keras variable, else None."""
    keras_variable = False
    for _ in range(_SEARCH_DEPTH):
        if frame is None:
            return None
        this = frame.f_locals.get("self")
        if isinstance(this, keras.Variable):
            keras_variable = True
        elif keras_variable and isinstance(this, _OWNERS):
            return this
        frame = frame.f_back
    return None


@contextlib.contextmanager
def _constructed_during(made: weakref.WeakSet):
    """Record in ``made`` every Keras layer, optimizer and metric constructed in the block."""
    originals = [(cls, cls.__init__) for cls in _OWNERS]

    def recording(original):
        @functools.wraps(original)
        def init(self, *args, **kwargs):
            made.add(self)
            original(self, *args, **kwargs)
        return init

    for cls, original in originals:
        cls.__init__ = recording(original)
    try:
        yield
    finally:
        for cls, original in originals:
            cls.__init__ = original


@contextlib.contextmanager
def keras_variables_made_eagerly(made_here: weakref.WeakSet | None = None):
    """While the block traces a function, Keras' variables are made eagerly (see the module).

    ``made_here`` holds the Keras objects constructed meanwhile, by object, not id (a freed object's
    id is reused): their variables take TensorFlow's own path. Entered around a ``tf.function``'s
    first trace, it still comes first: a trace inherits the caller's creators, and TensorFlow asks a
    public scope (priority 100) before the one ``tf.function`` opens for that trace (priority 50;
    ``tests/test_one_trace.py`` checks that it traces once).
    """
    made = weakref.WeakSet() if made_here is None else made_here

    def creator(next_creator, **kwargs):
        owner = _owner(sys._getframe(1))
        initial = kwargs.pop("initial_value")
        if (owner is None or owner in made or tf.distribute.has_strategy()
                or (not callable(initial) and tf.is_symbolic_tensor(initial))):
            return next_creator(initial_value=initial, **kwargs)
        with tf.init_scope():
            return ResourceVariable(initial_value=initial() if callable(initial) else initial, **kwargs)

    with _constructed_during(made), tf.variable_creator_scope(creator):
        yield


def traced_once(python_function):
    """``python_function`` with Keras' variables made eagerly while it is traced (see the module)."""
    made_here: weakref.WeakSet = weakref.WeakSet()  # one set for every trace of it

    @functools.wraps(python_function)
    def once(*args, **kwargs):
        with keras_variables_made_eagerly(made_here):
            return python_function(*args, **kwargs)

    return once
