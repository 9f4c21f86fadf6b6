"""Capture each ``tf.function`` of a running script at its first call, and answer the call without running it.

A call of a user's ``tf.function`` from eager code is traced by TensorFlow itself on the real
arguments (``get_concrete_function``: the same trace, variables and all, that the call would
make), its graph exported, and the call answered with zeros of the outputs' structure, dtypes
and shapes: nothing is compiled and nothing trains. A ``for`` loop over a dataset ends once a
captured function consumed one of its elements. The run stops (``RunStop``) once the functions
already captured were called again ``patience`` times with nothing new traced.
"""

from __future__ import annotations

import inspect
import os
import time
import weakref

import numpy as np
import tensorflow as tf

from xlalint.backend import run_hooks
from xlalint.backend.discover import _def_line, spec_json
from xlalint.backend.frames import is_user_file
from xlalint.backend.graph_export import export_graph
from xlalint.backend.run_guard import RunStop, user_site
from xlalint.backend.trace_errors import tracing_failure
from xlalint.wire import entry_record


def _code_of(function):
    """The plain Python function behind a tf.function (a method's function, not the bound method)."""
    python = inspect.unwrap(run_hooks.python_function(function))
    return getattr(python, "__func__", python)


def _display_name(python) -> str:
    """``train_step`` for a function nested in ``main()``, ``Trainer.step`` for a method."""
    return getattr(python, "__qualname__", getattr(python, "__name__", "function")).split(".<locals>.")[-1]


def _signature_key(args, kwargs):
    """What tf.function's cache would tell apart: tensors by spec, Python values by value."""
    def key(value):
        if isinstance(value, (tf.Tensor, tf.Variable)) or hasattr(value, "_type_spec"):
            return repr(tf.type_spec_from_value(value))
        if isinstance(value, np.ndarray):  # traced like a tensor of its dtype and shape
            return repr((value.dtype.str, value.shape))
        return repr(value) if isinstance(value, (int, float, str, bool, type(None))) else type(value).__name__
    return repr(tf.nest.map_structure(key, (args, kwargs)))


def fake_outputs(structure):
    """Zeros of each output tensor's dtype and shape (an unknown dimension is 1); other values as they are."""
    def fake(value):
        if not isinstance(value, tf.Tensor):
            return value
        if value.dtype in (tf.resource, tf.variant):
            return None
        shape = [] if value.shape.rank is None else [1 if d is None else d for d in value.shape.as_list()]
        return tf.zeros(shape, value.dtype)
    return tf.nest.map_structure(fake, structure)


class Capture:
    """Every captured function of one run, in the order they were first called."""

    def __init__(self, recorder, saved, patience: int = 2):
        self.recorder = recorder
        self.saved = saved  # called after each new capture: the result survives a hard kill
        self.patience = patience
        self.records: list[dict] = []
        self._by_key: dict = {}  # code object (or Keras label) -> record
        self._concrete: dict = {}  # (key, signature) -> concrete function
        self.calls = 0  # answered calls of captured functions
        self.since_new = 0  # of those, since the last new trace
        self.last_site: list | None = None
        self._dataset_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # iterator -> self.calls when it last yielded

    def install(self) -> None:
        run_hooks.on_function_call(self._on_call)
        run_hooks.on_dataset_next(self._on_next)

    def _on_call(self, function, original, args, kwargs):
        if not tf.executing_eagerly():  # a call inside a trace: part of its caller's graph
            return original(function, *args, **kwargs)
        python = _code_of(function)
        source = inspect.getsourcefile(python) if inspect.isfunction(python) else None
        if not source or not is_user_file(source):  # a library's own tf.function: let it run
            return original(function, *args, **kwargs)
        where = {"path": os.path.realpath(source), "line": _def_line(python, 1),
                 "name": _display_name(python), "kind": "tf.function"}
        return self.call(function, args, kwargs, python.__code__, where)

    def call(self, function, args, kwargs, key, where: dict):
        """Trace ``function`` on these arguments unless that trace is known, then answer with fake outputs."""
        site = user_site(1)
        signature = _signature_key(args, kwargs)
        concrete = self._concrete.get((key, signature))
        if concrete is None:
            concrete = self._trace(function, args, kwargs, key, where, site)
            self._concrete[(key, signature)] = concrete
            self.since_new = 0
        else:
            self.since_new += 1
        record = self._by_key[key]
        record["calls"] += 1
        self.calls += 1
        self.last_site = list(site[0]) if site else None
        outputs = fake_outputs(concrete.structured_outputs)
        if self.since_new > self.patience * len(self.records):
            raise RunStop(f"every compiled function reached was captured, and {self.since_new} more calls "
                          "traced nothing new", self.last_site, "captured")
        return outputs

    def _trace(self, function, args, kwargs, key, where: dict, site):
        record = self._by_key.get(key)
        if record is not None:  # a new signature: the real call would trace (and compile) again
            record["traces"] += 1
            return function.get_concrete_function(*args, **kwargs)
        call = list(site[0]) if site else None
        path, line = (where["path"], where["line"]) if where["path"] else (call or [None, 1])[:2]
        record = {**entry_record(where["name"], line, where["kind"], run_hooks.jit_compile(function), []),
                  "path": path, "call": call, "traces": 1, "calls": 0}
        self._by_key[key] = record
        self.records.append(record)
        started = time.perf_counter()
        try:
            concrete = function.get_concrete_function(*args, **kwargs)
        except Exception as error:  # the user's trace failed: the real call fails the same way
            record["error"] = tracing_failure(record["name"], record["signature"], error)
            self.saved()
            raise
        specs = [s for s in tf.nest.flatten(concrete.structured_input_signature, expand_composites=True)
                 if isinstance(s, tf.TensorSpec)]
        record["signature"] = [spec_json(s) for s in specs]
        traced = time.perf_counter()
        record["graph"] = export_graph(concrete, len(specs), self.recorder.layer_of)
        record["timing"] = {"trace_s": traced - started, "export_s": time.perf_counter() - traced}
        self.saved()
        return concrete

    def _on_next(self, iterator, original):
        """End a dataset loop once a captured function consumed one of its elements."""
        seen = self._dataset_at.get(iterator)
        if seen is not None and self.calls > seen:
            raise StopIteration
        value = original(iterator)
        self._dataset_at[iterator] = self.calls
        return value
