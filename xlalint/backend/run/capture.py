"""Capture each ``tf.function`` of a running script at its first call, and answer the call without running it.

A call of a user's ``tf.function`` from eager code is traced by TensorFlow itself on the real
arguments (``get_concrete_function``: the same trace, variables and all, that the call would
make), its graph exported, and the call answered with zeros of the outputs' structure, dtypes
and shapes: nothing is compiled and nothing trains (with ``first_step``: by the call itself, run
without XLA: ``Capture._first_step``). A ``jit_compile`` function called inside the trace of one without it (the
step a distribution strategy's ``strategy.run`` calls per replica, say) is compiled on its own by
the real program: it is captured too, from that trace. A ``tf.function`` the user's line makes of an object (a
Keras model or layer, an instance with ``__call__``) is the user's too, keyed by the object's own ``call``/``__call__``
where the user wrote it, else by the line that made it. A ``for`` loop over a dataset (a distributed
one too) ends once the captured calls since its last element traced nothing new: one more element
after a new trace, so that a step a value from the loop makes trace again is seen retracing (up to
``HELD_TRACES``); the calls of that element do not count as calls that traced nothing. Once the functions
already captured were called again ``patience`` times with nothing new traced, the loop repeating them is left
for the code after it (``loops.leave_loop``); a loop with no code after it stops the run (``RunStop``).

Each record (``core.wire.CapturedRecord``) also keeps what only a run shows, which the rules of stage
"captured" read: the arguments of each trace (``trace_args``), how many ``tf.function`` objects of
one definition were called (``functions``, with where they were made), the variables its first trace
created and whether TensorFlow could lift them out (``variables``, ``unliftable``), the partial
batches and the relaxed specs of the datasets that fed it (``batches``, ``dataset_specs``), whether
auto-clustering was on when it was captured (``auto_jit``: ``set_jit`` called, or ``TF_XLA_FLAGS``),
and the devices of its variables where they are several (``resource_devices``).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
import time
import weakref
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from xlalint.backend.run import hooks as run_hooks
from xlalint.backend.discover import def_line, spec_json
from xlalint.backend.frames import innermost_user_frame, is_user_file, user_frames
from xlalint.backend.run.batches import Batches
from xlalint.backend.graph_export import export_graph
from xlalint.backend.one_trace import keras_variables_made_eagerly
from xlalint.backend.run.guard import RunStop, user_site
from xlalint.backend.run.loops import leave_loop
from xlalint.backend.trace_errors import tracing_failure
from xlalint.backend.variable_devices import captured_devices, record_devices
from xlalint.autocluster.program import AUTO_JIT, CPU_GLOBAL_JIT
from xlalint.core.wire import AutoJit, CapturedRecord, entry_record


def _code_of(function):
    """The plain Python function behind a tf.function (a method's function, not the bound method)."""
    python = inspect.unwrap(run_hooks.python_function(function))
    return getattr(python, "__func__", python)


def _display_name(python) -> str:
    """``train_step`` for a function nested in ``main()``, ``Trainer.step`` for a method."""
    return getattr(python, "__qualname__", getattr(python, "__name__", "function")).split(".<locals>.")[-1]


def _where(python, source: str) -> dict:
    """Where a captured function of the user's is reported: its ``def``."""
    return {"path": os.path.realpath(source), "line": def_line(python, 1), "name": _display_name(python),
            "kind": "tf.function"}


HELD_TRACES = 3  # a function traced this often retraces: its further new signatures do not hold the run
KEPT_TRACES = 8  # the arguments of this many traces are kept per function


def _shape_text(dtype: str, shape) -> str:
    return f"{dtype}[*]" if shape.rank is None else f"{dtype}[{','.join('None' if d is None else str(d) for d in shape)}]"


def _describe(value) -> str:
    """What tf.function's cache tells apart: a tensor by dtype and shape, a Python value by value."""
    if isinstance(value, (tf.Tensor, tf.Variable)) or hasattr(value, "_type_spec"):
        spec = tf.type_spec_from_value(value)
        return _shape_text(spec.dtype.name, spec.shape) if isinstance(spec, tf.TensorSpec) else repr(spec)
    if isinstance(value, np.ndarray):  # traced like a tensor of its dtype and shape
        return _shape_text(value.dtype.name, tf.TensorShape(value.shape))
    return repr(value) if isinstance(value, (int, float, str, bool, type(None))) else type(value).__name__


def _arguments(function, args, kwargs) -> list[list[str]]:
    """``[[name, description], ...]`` of a call's arguments, named as the Python function names them."""
    bound: list[tuple[str, object]]
    try:
        bound = list(inspect.signature(run_hooks.python_function(function)).bind(*args, **kwargs).arguments.items())
    except (TypeError, ValueError):  # a signature inspect cannot read, or arguments it does not take
        bound = [*((f"argument {i}", a) for i, a in enumerate(args)), *kwargs.items()]
    return [[name, repr(tf.nest.map_structure(_describe, value))] for name, value in bound]


def _variable_lines(made: list[tuple], unliftable: str | None) -> list[list]:
    """The user lines that made variables, each once: first the one whose initial value TensorFlow
    could not lift (its error names the tensor), where there is one."""
    failed = re.search(r"lift tensor <tf\.Tensor '([^']+)'", unliftable or "")
    ordered = sorted(made, key=lambda item: not (failed and item[1] == failed.group(1)))
    lines: list[list] = []
    for line, _ in ordered:
        if line not in lines:
            lines.append(line)
    return lines


def fake_outputs(structure):
    """Zeros of each output tensor's dtype and shape (an unknown dimension is 1), a distributed value's
    (one per replica) too; other values as they are."""
    def fake(value):
        if isinstance(value, tf.distribute.DistributedValues):
            return tf.nest.map_structure(fake, value, expand_composites=True)
        if not isinstance(value, tf.Tensor):
            return value
        if value.dtype in (tf.resource, tf.variant):
            return None
        shape = [] if value.shape.rank is None else [1 if d is None else d for d in value.shape.as_list()]
        return tf.zeros(shape, value.dtype)
    return tf.nest.map_structure(fake, structure)


def _xla_in(concrete) -> bool:
    """Whether a call of this traced function compiles with XLA: it, or a function it calls, has ``jit_compile=True``
    (auto-clustering aside)."""
    functions = [concrete.function_def, *concrete.graph.as_graph_def().library.function]
    return any(f.attr["_XlaMustCompile"].b for f in functions if "_XlaMustCompile" in f.attr)


class Capture:
    """Every captured function of one run, in the order they were first called."""

    def __init__(self, recorder, saved, patience: int = 2, first_step: bool = False):
        self.recorder = recorder
        self.saved = saved  # called after each new capture: the result survives a hard kill
        self.patience = patience
        self.first_step = first_step  # answer each call by running it, without XLA
        self.batches = Batches()
        self._objects: dict = {}  # key -> WeakSet of the tf.function objects called for it
        self._made_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tf.function -> user frame
        self._made_by_user: weakref.WeakSet = weakref.WeakSet()  # the tf.functions the user's code made itself
        self._variables: list[tuple] = []  # (user line, initial value's name) of each variable made in a first trace
        self._running = False  # a first step is running: calls inside it are its own
        self.records: list[CapturedRecord] = []
        self._by_key: dict[Any, CapturedRecord] = {}  # code object (or Keras label) -> record
        self._concrete: dict = {}  # (key, signature) -> concrete function
        self._compiles: dict = {}  # (key, signature) -> whether its trace has jit_compile=True (auto-clustering aside)
        self.calls = 0  # answered calls of captured functions
        self.since_new = 0  # of those, since the last new trace
        self.new_traces = 0  # traces that hold the run (a function's first HELD_TRACES)
        self._probing = False  # the element a dataset loop gave after a new trace: its calls look for a retrace
        self.last_site: list | None = None
        self.zeros_from: str | None = None  # the last function whose call was answered with zeros
        # iterator -> (self.calls, self.new_traces) when it last yielded
        self._dataset_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._tracing: list[bool] = []  # the jit_compile setting of each function being traced, innermost last
        self._set_jit_at: list | None = None  # [file, line] of the set_jit call that turned auto-clustering on
        self.active = True  # off: every call and loop runs as the program wrote it (xlalint's own traces after)
        # handler(python function, args, kwargs) -> None, or a callable answering a library's call (keras_steps)
        self.library_steps: list = []
        self.loops_left = 0  # loops of captured calls left for the code after them (``loops.leave_loop``)

    def captured(self, model) -> bool:
        """Whether a step of this Keras model was captured (``keras_steps``)."""
        return any(isinstance(key, tuple) and key[1] == id(model) for key in self._by_key)

    def install(self) -> None:
        run_hooks.on_function_call(self._on_call)
        run_hooks.on_dataset_next(self._on_next)
        run_hooks.on_function_made(self._on_made)
        run_hooks.on_variable_in_trace(self._on_variable)
        self.batches.install()
        self._watch_set_jit()

    def _on_made(self, function) -> None:
        if not self.active:
            return
        site = user_site(1)
        if site:
            self._made_at[function] = [os.path.realpath(site[0][0]), *site[0][1:]]
            if run_hooks.is_tf_function_api(site[1]):  # tf.function(...) called by the user's line itself
                self._made_by_user.add(function)

    def _on_variable(self, frames, initial_value) -> None:
        if not self.active:
            return
        mine = user_frames(frames)
        if mine:
            self._variables.append((mine[-1], initial_value.name if tf.is_symbolic_tensor(initial_value) else None))

    def _on_call(self, function, original, args, kwargs):
        if self._running or not self.active:  # inside a first step: part of its caller
            return original(function, *args, **kwargs)
        python = _code_of(run_hooks.cloned_from(function) or function)  # strategy.run(f): f's clone is f's
        found = self._users(function, python)
        if found is None:  # a library's own tf.function: let it run, unless it is a library's step (keras_steps)
            answer = next(filter(None, (step(python, args, kwargs) for step in self.library_steps)), None)
            return answer() if answer else original(function, *args, **kwargs)
        key, where, counted = found
        if not tf.executing_eagerly():
            return self._inside_trace(function, original, args, kwargs, key, where)
        return self.call(function, args, kwargs, key, where, lambda: original(function, *args, **kwargs), counted)

    def _users(self, function, python) -> tuple[Any, dict, bool] | None:
        """``(key, where, counted)`` of a ``tf.function`` of the user's (``python``: what it wraps), None for a
        library's: its code object and ``def`` (``counted``: each new object of it is a new tf.function, not a
        method's copy per instance)."""
        if not inspect.isfunction(python):
            return self._wrapper(function, python)
        source = inspect.getsourcefile(python)
        if not source or not is_user_file(source):
            return None
        method = inspect.ismethod(inspect.unwrap(run_hooks.python_function(function)))
        return python.__code__, _where(python, source), not method

    def _wrapper(self, function, wrapped) -> tuple[Any, dict, bool] | None:
        """A ``tf.function`` the user's code made of a callable object (``tf.function(model, jit_compile=True)``,
        of a layer, of an instance with ``__call__``): at the ``def`` of the object's own ``call``/``__call__``
        where the user wrote it, else (a Keras model of built-in layers) at the line that made the tf.function."""
        made = self._made_at.get(function)
        if function not in self._made_by_user or made is None:
            return None
        own = getattr(type(wrapped), "call" if isinstance(wrapped, keras.layers.Layer) else "__call__", None)
        source = inspect.getsourcefile(own) if inspect.isfunction(own) else None
        if own is not None and source and is_user_file(source):
            return own.__code__, _where(own, source), True
        return (made[0], made[1]), {"path": made[0], "line": made[1], "kind": "tf.function",
                                    "name": f"tf.function({type(wrapped).__name__})"}, True

    def _inside_trace(self, function, original, args, kwargs, key, where: dict):
        """A call inside a trace is part of its caller's graph; a ``jit_compile`` function called inside
        one without it is compiled on its own, so it is captured too (already traced by that call)."""
        jit = run_hooks.jit_compile(function) is True
        self._tracing.append(jit)
        try:
            outputs = original(function, *args, **kwargs)
        finally:
            self._tracing.pop()
        if jit and not any(self._tracing):
            arguments = _arguments(function, args, kwargs)
            if (key, repr(arguments)) not in self._concrete:
                self._concrete[(key, repr(arguments))] = self._trace(function, args, kwargs, key, where,
                                                                     user_site(1), arguments)
            self._by_key[key]["calls"] += 1
        return outputs

    def call(self, function, args, kwargs, key, where: dict, run=None, counted: bool = True):
        """Trace ``function`` on these arguments unless that trace is known, then answer with fake outputs
        (with ``first_step``: with what ``run()`` returns, without XLA: ``_first_step``). ``counted``: each new
        object of ``function``'s definition is a new tf.function (not so for a method's copy per instance)."""
        site = user_site(1)
        arguments = _arguments(function, args, kwargs)
        signature = repr(arguments)
        traced = (key, signature) not in self._concrete
        if traced:
            self._concrete[(key, signature)] = self._trace(function, args, kwargs, key, where, site, arguments)
        concrete = self._concrete[(key, signature)]
        record = self._by_key[key]
        held = traced and record["traces"] <= HELD_TRACES
        self.since_new = 0 if held else self.since_new + (not self._probing)
        self.new_traces += held
        self._note(record, function, args, kwargs, counted)
        record["calls"] += 1
        self.calls += 1
        self.last_site = list(site[0]) if site else None
        if self.first_step and run:
            if (key, signature) not in self._compiles:
                self._compiles[(key, signature)] = _xla_in(concrete)
            # auto-clustering is asked at each call: the program may turn it on between two calls
            outputs = self._first_step(run, eager=self._compiles[(key, signature)] or self._auto_jit() is not None)
        else:
            outputs, self.zeros_from = fake_outputs(concrete.structured_outputs), record["name"]
        if self.since_new > self.patience * len(self.records):
            self._quiet()
        return outputs

    def _quiet(self) -> None:
        """The captured calls traced nothing new ``patience`` times over: leave the loop that repeats them and go
        on with the code after it (``loops.leave_loop``); straight-line code just goes on. A loop with no code
        after it in its function stops the program (``RunStop``)."""
        def stop() -> RunStop:
            return RunStop(f"every compiled function reached was captured, and {self.since_new} more calls "
                           "traced nothing new", self.last_site, "captured")

        frame = innermost_user_frame(sys._getframe(1))  # noqa: SLF001
        outcome = "last" if frame is None else leave_loop(frame, stop)
        if outcome == "last":
            raise stop()
        self.loops_left += outcome == "left"
        self.since_new = 0

    def _first_step(self, run, eager: bool):
        """The call's real outputs without XLA. A call XLA would compile runs ``eager``ly: no graph, so no XLA
        (its Python runs at each call); any other as the program runs it, on its traced graph (its outputs are
        tensors where a branch returns a Python number, its Python side effects happened once, at the trace)."""
        self._running, eagerly = True, tf.config.functions_run_eagerly()
        tf.config.run_functions_eagerly(eager or eagerly)
        try:
            return run()
        finally:
            tf.config.run_functions_eagerly(eagerly)
            self._running = False

    def _note(self, record: CapturedRecord, function, args, kwargs, counted: bool) -> None:
        """What this call adds: a new tf.function object of the definition, the datasets feeding it."""
        objects = self._objects.setdefault(id(record), weakref.WeakSet())
        if counted and function not in objects:
            objects.add(function)
            record["functions"] += 1
            made = self._made_at.get(function)
            if made and made not in record["made_at"] and len(record["made_at"]) < KEPT_TRACES:
                record["made_at"].append(made)
        batches, relaxed = self.batches.feeding(args, kwargs)
        for batch in batches:
            if batch not in record["batches"]:
                record["batches"].append(batch)
        for spec in relaxed:
            if spec not in record["dataset_specs"]:
                record["dataset_specs"].append(spec)

    def _trace(self, function, args, kwargs, key, where: dict, site, arguments):
        record = self._by_key.get(key)
        if record is not None:  # a new signature: the real call would trace (and compile) again
            record["traces"] += 1
            if len(record["trace_args"]) < KEPT_TRACES:
                record["trace_args"].append(arguments)
            started = time.perf_counter()
            try:
                return function.get_concrete_function(*args, **kwargs)
            finally:  # the script pays each trace too: counted in the run's trace_s
                if "timing" in record:
                    record["timing"]["trace_s"] += time.perf_counter() - started
        call = list(site[0]) if site else None
        path, line = (where["path"], where["line"]) if where["path"] else (call or [None, 1])[:2]
        record = {**entry_record(where["name"], line, where["kind"], run_hooks.jit_compile(function), []),
                  "path": path, "call": call, "traces": 1, "calls": 0, "trace_args": [arguments], "functions": 0,
                  "made_at": [], "batches": [], "dataset_specs": [], "variables": [], "unliftable": None,
                  "auto_jit": self._auto_jit(), **({"keras": where["keras"]} if "keras" in where else {})}
        self._by_key[key] = record
        self.records.append(record)
        started = time.perf_counter()
        made = len(self._variables)
        self._tracing.append(record["jit_compile"] is True)
        try:
            concrete = self._first_trace(function, args, kwargs, record)
        except Exception as error:  # the user's trace failed: the real call fails the same way
            record["error"] = tracing_failure(record["name"], record["signature"], error)
            self.saved()
            raise
        finally:
            self._tracing.pop()
            record["variables"] = _variable_lines(self._variables[made:], record["unliftable"])
        specs = [s for s in tf.nest.flatten(concrete.structured_input_signature, expand_composites=True)
                 if isinstance(s, tf.TensorSpec)]
        record["signature"] = [spec_json(s) for s in specs]
        record_devices(record, captured_devices(concrete))
        traced = time.perf_counter()
        record["graph"] = export_graph(concrete, len(specs), self.recorder.layer_of)
        record["timing"] = {"trace_s": traced - started, "export_s": time.perf_counter() - traced}
        self.saved()
        return concrete

    @staticmethod
    def _first_trace(function, args, kwargs, record: CapturedRecord):
        """TensorFlow's first trace, made once: the variables Keras builds in it for objects that existed
        before are made eagerly (``one_trace``), so TensorFlow keeps the trace instead of tracing again.
        Where it cannot lift a variable's initial value out of the function (it depends on the arguments),
        the reason is kept and the trace without variable creation taken: the real call runs it behind a
        ``cond`` that initializes the variable, which XLA refuses."""
        with keras_variables_made_eagerly():
            try:
                return function.get_concrete_function(*args, **kwargs)
            except run_hooks.UNLIFTABLE as error:
                record["unliftable"] = str(error).splitlines()[0][:300]
            return function.get_concrete_function(*args, **kwargs)

    def _watch_set_jit(self) -> None:
        """Remember where the script turned auto-clustering on (``tf.config.optimizer.set_jit``, public)."""
        real = tf.config.optimizer.set_jit

        @functools.wraps(real)
        def set_jit(*args, **kwargs):
            real(*args, **kwargs)
            site = user_site(1)
            if tf.config.optimizer.get_jit():
                self._set_jit_at = [os.path.realpath(site[0][0]), site[0][1]] if site else None
        tf.config.optimizer.set_jit = set_jit

    def _auto_jit(self) -> AutoJit | None:
        """Whether auto-clustering is on now, and what turned it on: ``set_jit`` (``where``: its call, when
        the script's) or ``TF_XLA_FLAGS`` (``flags``); None when it is off."""
        flags = os.environ.get("TF_XLA_FLAGS", "")
        on_by_flags = AUTO_JIT.search(flags) is not None
        if not (tf.config.optimizer.get_jit() or on_by_flags):
            return None
        return {"where": None if on_by_flags else self._set_jit_at, "flags": flags if on_by_flags else None,
                "cpu_global_jit": CPU_GLOBAL_JIT.search(flags) is not None}

    def _on_next(self, iterator, original, stepped: bool):
        """End a ``for`` loop over a dataset once captured functions consumed its last element and traced
        nothing new. A ``next(it)`` call is answered with the element: its ``StopIteration`` would escape
        where the data has not run out (``for step in range(n): f(next(it))``); patience leaves its loop."""
        if not self.active:
            return original(iterator)
        calls, traces = self._dataset_at.get(iterator, (self.calls, None))  # a new loop has consumed nothing
        self._probing = False  # also when the loop ends here, or its data runs out
        if stepped and self.calls > calls and self.new_traces == traces:
            raise StopIteration
        value = original(iterator)
        self._probing = stepped and self.calls > calls  # a next() call's loop is left by patience alone
        self._dataset_at[iterator] = (self.calls, self.new_traces)
        self.batches.gave(iterator, value)
        return value
