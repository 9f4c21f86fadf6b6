"""A training step is traced once, and the graph is the one TensorFlow itself compiles.

TensorFlow traces a function that creates variables on its first call twice and runs (and hands
XLA) the second trace, made once the variables exist. xlalint's single trace must equal that second
trace: each case traces the user's step through discovery's ``Candidate.trace`` first, then asks a
fresh ``tf.function`` of the same Python function for its graph, which, with the variables now in
place, is what TensorFlow's second trace builds. A function that TensorFlow refuses (new variables at
every call) must still be refused.
"""

from __future__ import annotations

import collections
import re

import numpy as np

import pytest

pytestmark = pytest.mark.tf

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from xlalint.backend.discover import Candidate  # noqa: E402 - after TensorFlow's skip
from xlalint.backend.keras_step import train_step_candidate  # noqa: E402
from xlalint.backend.one_trace import keras_variables_made_eagerly  # noqa: E402

SPECS = [tf.TensorSpec([8, 16], tf.float32), tf.TensorSpec([8], tf.int32)]


def _classifier():
    return keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.BatchNormalization(), keras.layers.Dropout(0.2), keras.layers.Dense(4)])


def _adam_step(traces: collections.Counter):
    model, optimizer, metric = _classifier(), keras.optimizers.Adam(1e-3), keras.metrics.SparseCategoricalAccuracy()

    def step(x, y):
        traces["step"] += 1
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        metric.update_state(y, logits)
        if loss > 1.0:  # AutoGraph still converts the user's code
            loss = loss * 2.0
        return loss
    return step


class Subclassed(keras.Model):
    """Built lazily: its weights are made on the first call, inside the trace."""

    def __init__(self):
        super().__init__()
        self.hidden, self.out = keras.layers.Dense(8), keras.layers.Dense(4)

    def call(self, x):
        return self.out(tf.nn.relu(self.hidden(x)))


def _momentum_step(traces: collections.Counter):
    model, optimizer = Subclassed(), keras.optimizers.SGD(0.1, momentum=0.9)

    def step(x, y):
        traces["step"] += 1
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    return step


def _guarded_variable(traces: collections.Counter):
    """The documented pattern for a variable of the user's own: made once, on the first trace."""
    made = []

    def step(x, y):
        traces["step"] += 1
        if not made:
            made.append(tf.Variable(tf.ones([16, 4])))
        return tf.reduce_sum(x @ made[0]) + tf.cast(tf.reduce_sum(y), tf.float32)
    return step


def _ops(graph) -> list[tuple]:
    """Each op's type, name and inputs, with name-scope counters dropped (``adam_1/Sub_3`` -> ``adam/Sub``):
    a scope used once more in one graph numbers every later op of that scope differently."""
    def plain(name: str) -> str:
        return "/".join(re.sub(r"(_\d+)+$", "", part) for part in name.split("/"))
    return sorted((op.type, plain(op.name), tuple(plain(t.name) for t in op.inputs)) for op in graph.get_operations())


def _trace(step):
    candidate = Candidate("step", 1, "tf.function", function=tf.function(step), python_function=step, specs=SPECS)
    return candidate.trace()[0]


@pytest.mark.parametrize("make", [_adam_step, _momentum_step, _guarded_variable])
def test_traced_graph_is_the_one_tensorflow_compiles(make):
    traces: collections.Counter = collections.Counter()
    step = make(traces)
    ours = _trace(step)
    once = traces["step"]
    theirs = tf.function(step, jit_compile=True).get_concrete_function(*SPECS)  # the variables exist now
    assert _ops(ours.graph) == _ops(theirs.graph)
    # Keras' variables are made eagerly, so one trace; a user's own variable takes TensorFlow's path (two)
    assert once == (2 if make is _guarded_variable else 1)


def test_new_variables_at_every_call_are_refused_as_tensorflow_refuses_them():
    def step(x, y):
        return keras.layers.Dense(4)(x)

    with pytest.raises(ValueError) as theirs:
        tf.function(step, jit_compile=True).get_concrete_function(*SPECS)
    with pytest.raises(ValueError) as ours:
        _trace(step)
    assert "singleton" in str(theirs.value) and "singleton" in str(ours.value)


def test_fit_step_is_traced_once_with_what_fit_builds_first():
    traces: collections.Counter = collections.Counter()

    class Counted(keras.Model):
        def train_step(self, data):
            traces["step"] += 1
            return super().train_step(data)

    inputs = keras.Input((16,), name="x")
    model = Counted(inputs, keras.layers.Dense(4)(keras.layers.Dense(32, activation="relu")(inputs)))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"], jit_compile=True)
    candidate = train_step_candidate("model", model, 1, tf.TensorSpec([8, 16], tf.float32, name="x"), lambda _: None)
    ours = candidate.trace()[0]
    assert traces["step"] == 1
    theirs = tf.function(candidate.python_function, jit_compile=True).get_concrete_function(*candidate.specs)
    assert _ops(ours.graph) == _ops(theirs.graph)


def _three_steps(step):
    """The losses of three calls on one batch, then every variable the step uses (its optimizer's
    iterations too) after them: ``(name, shape, value)``, by name and shape (two layers' variables
    may share a name)."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 16)).astype("float32"), rng.integers(0, 4, 8).astype("int32")
    losses = [float(step(x, y)) for _ in range(3)]
    return losses, sorted(((v.name, tuple(v.shape), v.numpy()) for v in step.get_concrete_function(*SPECS).variables),
                          key=lambda item: item[:2])


@pytest.mark.parametrize("make", [_adam_step, _momentum_step, _guarded_variable])
def test_a_functions_own_first_trace_in_the_scope_is_kept_and_computes_as_without_it(make):
    keras.backend.clear_session()  # the same layer names on both sides
    keras.utils.set_random_seed(0)
    traces: collections.Counter = collections.Counter()
    ours = tf.function(make(traces), jit_compile=True)
    with keras_variables_made_eagerly():  # as `xlalint run` traces a captured call
        graph = ours.get_concrete_function(*SPECS).graph
    once = traces["step"]
    our_run = _three_steps(ours)
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    theirs = tf.function(make(collections.Counter()), jit_compile=True)
    their_run = _three_steps(theirs)
    assert once == (2 if make is _guarded_variable else 1) and traces["step"] == once  # the calls traced nothing
    assert _ops(graph) == _ops(theirs.get_concrete_function(*SPECS).graph)  # the graph TensorFlow runs
    assert our_run[0] == pytest.approx(their_run[0], rel=1e-6)
    assert [v[:2] for v in our_run[1]] == [v[:2] for v in their_run[1]]  # the same variables
    for (name, _, value), (_, _, expected) in zip(our_run[1], their_run[1]):
        np.testing.assert_allclose(value, expected, rtol=1e-6, err_msg=name)
    if make is _adam_step:
        assert [value for name, _, value in our_run[1] if "iteration" in name] == [3]
