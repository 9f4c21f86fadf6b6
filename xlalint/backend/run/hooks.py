"""The private TensorFlow and Keras hooks that ``xlalint run`` uses, and nothing else.

Every attribute named here is private to TensorFlow or Keras and may move between releases;
``SUPPORTED`` lists the releases each hook was checked on (``tests/test_run_hooks.py``, which
``bench/version_matrix.py`` runs with TensorFlow 2.16 to 2.21). Read from TensorFlow 2.21 and Keras 3.15:

- ``polymorphic_function.Function.__call__``: every call of every ``tf.function`` (methods
  too: ``__get__`` binds a copy of the same class), with its real arguments.
- ``Function._jit_compile`` and ``Function._python_function``: the function's XLA setting and
  the plain Python function behind it.
- ``iterator_ops.OwnedIterator.__next__``: the next element of a ``for x in dataset`` loop;
  ``input_lib.DistributedIteratorBase.__next__``: the same over ``experimental_distribute_dataset``.
- ``Function.__init__``: where each ``tf.function`` object is made; ``tf.function(...)`` called by
  the user's line itself runs ``deprecation``'s wrappers and ``polymorphic_function.function`` in between.
- ``mirrored_run.call_for_each_replica``: ``strategy.run(f)`` with a ``tf.function`` ``f`` runs a
  clone of ``f`` whose Python function (``wrapped_fn``) holds ``f`` in its closure.
- ``polymorphic_function.UnliftedInitializerVariable.__init__``: each variable a ``tf.function``
  creates in its first trace (``tf_stack.extract_stack`` gives the user's line through autograph);
  ``lift_to_graph.UnliftableError``: the initial value depends on the function's arguments.
- ``DatasetV2._inputs``: the datasets a dataset is made from (public ``batch``, ``padded_batch``
  and ``__iter__`` are wrapped here too, beside the rest).
- ``keras.src.backend.tensorflow.trainer.TensorFlowTrainer._make_function``: where Keras
  wraps ``train_step``/``test_step`` in ``tf.function(one_step_on_data, jit_compile=...)``.
- ``TensorFlowTrainer.make_predict_function`` and ``predict_function``: where Keras wraps
  ``predict_step`` in ``tf.function(one_step_on_data, jit_compile=True)`` (only when its
  ``jit_compile`` is on) inside a plain ``tf.function`` taking a list of batches.
- tf-keras (``tf_keras.src.engine.training``, read from tf-keras 2.16 to 2.21): ``make_train_function``,
  ``make_test_function`` and ``make_predict_function`` wrap a plain ``train_function(iterator)`` (``test_function``,
  ``predict_function``), closing over the model as ``self``, in a ``tf.function``; it calls ``train_step``
  (``test_step``, ``predict_step``) on ``next(iterator)``, in ``tf.function(run_step, jit_compile=True)`` when the
  model's ``jit_compile`` is on. Recognized by that module and name, so tf-keras is never imported here.
- ``file_io._pywrap_file_io``: the C++ calls behind ``tf.io.gfile`` writes (``WritableFile``,
  ``CreateDir``, ``RecursivelyCreateDir``, ``DeleteFile``, ``RenameFile``, ``CopyFile``,
  ``DeleteRecursively``), which Python's audit events do not see.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import inspect
import sys
from typing import Any

import keras
import tensorflow as tf
from keras.src.backend.tensorflow import trainer as keras_tf_trainer
from tensorflow.python.data.ops import dataset_ops, iterator_ops
from tensorflow.python.distribute import input_lib, mirrored_run
from tensorflow.python.eager import lift_to_graph
from tensorflow.python.eager.polymorphic_function import polymorphic_function
from tensorflow.python.lib.io import file_io
from tensorflow.python.util import deprecation, tf_stack

# (TensorFlow, Keras) releases these hooks were read from (2.21) and checked on (tests/test_run_hooks.py, run by
# bench/version_matrix.py in an environment per release: docs/versions.md)
SUPPORTED = tuple((f"2.{minor}", "3.15") for minor in range(16, 22))
FUNCTION = polymorphic_function.Function
DATASET_ITERATORS = (iterator_ops.OwnedIterator, input_lib.DistributedIteratorBase)  # plain, distributed
DATASET = dataset_ops.DatasetV2
LIFTED_VARIABLE = polymorphic_function.UnliftedInitializerVariable
UNLIFTABLE = lift_to_graph.UnliftableError  # a variable's initial value depends on the function's arguments
KERAS_TRAINER = keras_tf_trainer.TensorFlowTrainer
FILE_IO = file_io._pywrap_file_io  # noqa: SLF001
FOR_ITER = dis.opmap["FOR_ITER"]
TF_FUNCTION_API = (f"{deprecation.__name__}.", f"{polymorphic_function.__name__}.")  # what tf.function(...) runs
TF_KERAS_TRAINING = "tf_keras.src.engine.training"
TF_KERAS_STEPS = {"train_function": "train_step", "test_function": "test_step", "predict_function": "predict_step"}
# C++ file calls that write, with how many of their leading arguments are paths
FILE_WRITES = {"WritableFile": 1, "CreateDir": 1, "RecursivelyCreateDir": 1, "DeleteFile": 1,
               "RenameFile": 2, "CopyFile": 2, "DeleteRecursively": 1}


def installed() -> tuple[str, str]:
    """The installed ``(TensorFlow, Keras)`` releases, as ``major.minor``."""
    tensorflow, keras_release = (".".join(v.split(".")[:2]) for v in (tf.__version__, keras.__version__))
    return tensorflow, keras_release


def jit_compile(function) -> bool | None:
    return function._jit_compile  # noqa: SLF001


def python_function(function):
    return function._python_function  # noqa: SLF001


def cloned_from(function):
    """The ``tf.function`` a distribution strategy's ``strategy.run`` cloned ``function`` from (the clone
    keeps its ``jit_compile`` and runs it on every replica); None for any other function."""
    python = python_function(function)
    if getattr(python, "__module__", None) != mirrored_run.__name__:
        return None
    return next((cell.cell_contents for cell in python.__closure__ or ()
                 if isinstance(cell.cell_contents, FUNCTION)), None)


def is_tf_function_api(callee: str) -> bool:
    """Whether ``callee`` (a frame's ``module.qualified_name``) is ``tf.function`` itself: the user's line that
    called it made the ``tf.function`` (not a library's code it called)."""
    return callee.startswith(TF_FUNCTION_API)


def tf_keras_step(python) -> tuple[Any, str] | None:
    """``(model, step method name)`` when ``python`` is the one-step-per-call function tf-keras's ``fit``,
    ``evaluate`` or ``predict`` wraps in a ``tf.function``; None for any other function."""
    code = getattr(python, "__code__", None)
    if getattr(python, "__module__", None) != TF_KERAS_TRAINING or python.__name__ not in TF_KERAS_STEPS \
            or code is None or code.co_argcount != 1:  # steps_per_execution > 1: a loop over several steps
        return None
    cells = dict(zip(code.co_freevars, python.__closure__ or ()))
    return (cells["self"].cell_contents, TF_KERAS_STEPS[python.__name__]) if "self" in cells else None


def _wrap(owner, name: str, make):
    original = getattr(owner, name)
    setattr(owner, name, functools.wraps(original)(make(original)))
    return lambda: setattr(owner, name, original)


def on_function_call(handler):
    """``handler(function, original_call, args, kwargs)`` answers every ``tf.function`` call; returns an undo."""
    def make(original):
        def call(self, *args, **kwargs):
            return handler(self, original, args, kwargs)
        return call
    return _wrap(FUNCTION, "__call__", make)


def on_dataset_next(handler):
    """``handler(iterator, original_next, stepped)`` answers every ``next()`` on a dataset iterator (a
    distributed one too); ``stepped``: a ``for`` loop asks (also through ``enumerate``, ``zip`` or a
    comprehension), not a ``next(it)`` call, which no ``StopIteration`` is expected from. Returns an undo."""
    undos = [_wrap(owner, "__next__",
                   lambda original: lambda self: handler(self, original, _steps_a_loop(sys._getframe(1))))
             for owner in DATASET_ITERATORS]
    return lambda: [undo() for undo in undos]


def _steps_a_loop(frame) -> bool:
    """Whether ``frame`` is at a ``for`` loop's step (the caller of ``__next__``; C iterators such as
    ``enumerate`` make no frame of their own)."""
    return frame.f_code.co_code[frame.f_lasti] == FOR_ITER


def on_function_made(handler):
    """``handler(function)`` after each ``tf.function`` object is made; returns an undo."""
    def make(original):
        def init(self, *args, **kwargs):
            original(self, *args, **kwargs)
            handler(self)
        return init
    return _wrap(FUNCTION, "__init__", make)


def on_variable_in_trace(handler):
    """``handler(frames, initial_value)`` before each variable a ``tf.function`` creates while it traces;
    ``frames``: the Python stack, autograph's generated code mapped back to the user's lines. Returns an undo."""
    def make(original):
        def init(self, *args, **kwargs):
            handler(tf_stack.extract_stack(), kwargs.get("initial_value", args[0] if args else None))
            return original(self, *args, **kwargs)
        return init
    return _wrap(LIFTED_VARIABLE, "__init__", make)


def on_dataset_batch(handler):
    """``handler(batched, unbatched, batch_size, drop_remainder, caller)`` after each ``batch`` and
    ``padded_batch`` (``caller``: the frame that called it); returns an undo."""
    undos = []
    for name in ("batch", "padded_batch"):
        def make(original):
            signature = inspect.signature(original)

            def batch(self, *args, **kwargs):
                batched = original(self, *args, **kwargs)
                bound = signature.bind(self, *args, **kwargs)
                bound.apply_defaults()
                handler(batched, self, bound.arguments["batch_size"], bound.arguments["drop_remainder"],
                        sys._getframe(1))  # noqa: SLF001
                return batched
            return batch
        undos.append(_wrap(DATASET, name, make))
    return lambda: [undo() for undo in undos]


def on_dataset_iter(handler):
    """``handler(iterator, dataset)`` for each iterator made by ``iter(dataset)`` (a ``for`` loop); returns an undo."""
    def make(original):
        def iterate(self):
            iterator = original(self)
            handler(iterator, self)
            return iterator
        return iterate
    return _wrap(DATASET, "__iter__", make)


def dataset_inputs(dataset) -> list:
    """The datasets ``dataset`` is made from (none for a source, or for a kind that does not say)."""
    try:
        return list(dataset._inputs())  # noqa: SLF001
    except (AttributeError, NotImplementedError):
        return []


def on_keras_step(handler):
    """``handler(model, step_function, made, keras_function)`` replaces each Keras train/test function;
    ``made`` holds the ``tf.function``s Keras created for it (``one_step_on_data`` first). Returns an undo."""
    def make(original):
        def make_function(self, step_function):
            with _recording_functions() as made:
                keras_function = original(self, step_function)
            return handler(self, step_function, made, keras_function)
        return make_function
    return _wrap(KERAS_TRAINER, "_make_function", make)


def on_keras_predict(handler):
    """``handler(model, made, predict_function)`` replaces each Keras predict function (``predict``,
    ``predict_on_batch``: called with a list of batches); ``made`` holds the ``tf.function``s Keras created
    for it: the XLA-compiled ``one_step_on_data`` first when ``jit_compile`` is on, then the function taking
    the list. Returns an undo."""
    def make(original):
        def make_predict_function(self, force=False):
            if self.predict_function is not None and not force:
                return original(self, force)
            with _recording_functions() as made:
                original(self, force)
            self.predict_function = handler(self, made, self.predict_function)
            return self.predict_function
        return make_predict_function
    return _wrap(KERAS_TRAINER, "make_predict_function", make)


@contextlib.contextmanager
def _recording_functions():
    """Every ``tf.function`` made through ``tf.function(...)`` inside, in order (Keras calls it so)."""
    made: list = []
    real_function = tf.function

    def recording(*args, **kwargs):
        function = real_function(*args, **kwargs)
        made.append(function)
        return function

    with _replaced(tf, "function", recording):
        yield made


@contextlib.contextmanager
def _replaced(owner, name: str, value):
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def on_tf_file_write(check):
    """``check(path, event)`` runs before each C++ file write of ``tf.io.gfile`` (it may raise); returns an undo."""
    undos = []
    for name, paths in FILE_WRITES.items():
        def make(original, name=name, paths=paths):
            def guarded(*args, **kwargs):
                for path in args[:paths]:
                    check(path, name)
                return original(*args, **kwargs)
            return guarded
        undos.append(_wrap(FILE_IO, name, make))
    return lambda: [undo() for undo in undos]
