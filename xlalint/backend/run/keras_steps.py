"""Capture the step Keras compiles for ``fit``, ``evaluate``, ``predict`` and the ``*_on_batch`` calls,
with Keras's own ``jit_compile`` decision.

Keras wraps ``train_step``/``test_step`` in ``tf.function(one_step_on_data, jit_compile=...)``
and calls it inside another ``tf.function`` that takes the data iterator. Here the function Keras
made for the step is called eagerly on the first batch of each epoch instead: ``Capture`` traces
it on that batch and answers with fake outputs, and the epoch then ends as if the data ran out.

``predict`` compiles ``predict_step`` with XLA only when ``jit_compile`` is on (its own
``one_step_on_data``), inside a plain ``tf.function`` that takes a list of batches: that step is
captured on the first batch of the list (without XLA, the plain function on the whole list). Its
loop over the data then ends as a dataset loop does (``Capture``), so ``predict`` returns the first
batch's fake outputs.

tf-keras (Keras 2) calls a ``tf.function`` of its own once per step (``hooks.tf_keras_step``): that call is
answered in the same way, by a ``tf.function`` of the model's ``train_step`` (``test_step``, ``predict_step``)
made here with tf-keras's ``jit_compile``, captured on the first batch of each epoch, with tf-keras's own
decision (``tf_keras_step``); its epoch loops also end on ``StopIteration``.
"""

from __future__ import annotations

import inspect
import os
import weakref

import tensorflow as tf

from xlalint.backend.run import hooks as run_hooks
from xlalint.backend.frames import is_user_file


def install(capture) -> None:
    run_hooks.on_keras_step(lambda model, step, made, keras_function: _one_step_per_epoch(
        capture, model, step, made, keras_function))
    run_hooks.on_keras_predict(lambda model, made, predict_function: _predict(capture, model, made, predict_function))
    steps: dict = {}  # (model, step) key -> the function answering tf-keras's calls for it
    capture.library_steps.append(lambda python, args, kwargs: _tf_keras_step(capture, steps, python, args, kwargs))


def _tf_keras_step(capture, steps: dict, python, args, kwargs):
    """The answer to a call of tf-keras's one-step function, or None for any other library function."""
    found = run_hooks.tf_keras_step(python)
    if found is None or kwargs or len(args) != 1:
        return None
    model, name = found
    step = getattr(model, name)
    key = _key(model, step)
    if key not in steps:
        from xlalint.backend.tf_keras_step import jit_decisions

        one_step = tf.function(lambda data: step(data), jit_compile=True if model.jit_compile else None)
        steps[key] = _one_step_per_epoch(capture, model, step, [one_step], None, jit_decisions(model))
    return lambda: steps[key](args[0])


def _where(capture, model, step, decisions: dict | None = None) -> dict:
    """The user's own ``train_step`` override where there is one, else the line that called ``fit``; with
    what Keras decides for the model on each device (``keras``), as a checked file's ``MODEL.fit`` has it
    (``decisions``: tf-keras's, already made)."""
    from xlalint.backend.keras_step import jit_decisions

    method = getattr(step, "__func__", step)
    source = inspect.getsourcefile(method) if inspect.isfunction(method) else None
    recorder = capture.recorder
    where: dict = {"path": None, "line": None, "name": f"{type(model).__name__}.{step.__name__}", "kind": "keras-step",
                   "keras": decisions or jit_decisions(model, recorder.compiled, recorder.site_of)}
    if source and is_user_file(source):
        where.update(path=os.path.realpath(source), line=inspect.getsourcelines(method)[1])
    return where


def _one_step_per_epoch(capture, model, step, made, keras_function, decisions: dict | None = None):
    if not made:  # run_eagerly=True: Keras makes no tf.function, there is nothing to compile
        return keras_function
    one_step = made[0]
    stepped: weakref.WeakSet = weakref.WeakSet()
    where, key = _where(capture, model, step, decisions), _key(model, step)

    def function(iterator):
        if not hasattr(iterator, "get_next"):  # train_on_batch/test_on_batch: a generator of one batch
            data = next(iter(iterator))
        else:
            if iterator in stepped:
                raise StopIteration  # Keras ends the epoch as if the data ran out
            stepped.add(iterator)
            data = iterator.get_next()
            capture.batches.gave(iterator, data)
        return capture.call(one_step, (data,), {}, key, where, lambda: one_step(data))
    return function


def _key(model, step) -> tuple:
    return ("keras", id(model), step.__name__)


def _predict(capture, model, made, predict_function):
    if not made:  # run_eagerly=True
        return predict_function
    step = model.predict_step
    where, key = _where(capture, model, step), _key(model, step)
    compiled = len(made) > 1  # Keras's jit decision: one_step_on_data with XLA, inside the plain function

    def function(batches):
        data = batches[0] if compiled else batches  # compiled: the first batch, as one_step_on_data takes it
        return capture.call(made[0], (data,), {}, key, where, lambda: made[0](data))
    return function
