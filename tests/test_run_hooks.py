"""The private TensorFlow and Keras hooks behind `xlalint run` (xlalint/backend/run/hooks.py), per supported version.

Each hook is installed, seen to fire on the real thing, and undone.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from xlalint.backend.run import hooks as run_hooks

pytestmark = pytest.mark.tf  # every test here needs TensorFlow


@pytest.fixture(params=run_hooks.SUPPORTED, ids=[f"tf{t}-keras{k}" for t, k in run_hooks.SUPPORTED])
def supported(request):
    if run_hooks.installed() != request.param:
        pytest.skip(f"TensorFlow {request.param[0]} with Keras {request.param[1]} is not installed")


def test_the_installed_versions_are_supported():
    assert run_hooks.installed() in run_hooks.SUPPORTED


def test_function_calls_are_seen_with_their_real_arguments(supported):
    @tf.function(jit_compile=True)
    def double(x):
        return x * 2

    seen = []

    def handler(function, original, args, kwargs):
        seen.append((function, args))
        return original(function, *args, **kwargs)

    undo = run_hooks.on_function_call(handler)
    try:
        assert float(double(tf.constant(3.0))) == 6.0
    finally:
        undo()
    [(function, args)] = seen
    assert run_hooks.jit_compile(function) is True and run_hooks.python_function(function).__name__ == "double"
    assert args[0].shape == () and float(double(tf.constant(1.0))) == 2.0 and len(seen) == 1  # undone


def test_dataset_loops_are_seen(supported):
    calls = []
    undo = run_hooks.on_dataset_next(lambda iterator, original, stepped: calls.append(stepped) or original(iterator))
    try:
        assert [int(x) for x in tf.data.Dataset.range(3)] == [0, 1, 2]
        assert int(next(iter(tf.data.Dataset.range(3)))) == 0
    finally:
        undo()
    assert calls == [True] * 4 + [False]  # three elements and the end, stepped by a loop; then a next() call


def test_distributed_dataset_loops_are_seen(supported):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    calls = []
    undo = run_hooks.on_dataset_next(
        lambda iterator, original, _: calls.append(type(iterator).__name__) or original(iterator))
    try:
        batches = [strategy.experimental_local_results(x)[0].shape[0]
                   for x in strategy.experimental_distribute_dataset(tf.data.Dataset.range(6).batch(3))]
    finally:
        undo()
    assert batches == [3, 3] and calls == ["DistributedIterator"] * 3  # two batches, then the end


def test_strategy_run_of_a_tf_function_runs_a_clone_that_names_it(supported):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])

    @tf.function(jit_compile=True)
    def double(x):
        return x * 2

    seen = []

    def handler(function, original, args, kwargs):
        seen.append(function)
        return original(function, *args, **kwargs)

    undo = run_hooks.on_function_call(handler)
    try:
        result = strategy.run(double, args=(tf.constant(3.0),))
    finally:
        undo()
    assert float(strategy.experimental_local_results(result)[0]) == 6.0
    assert [run_hooks.cloned_from(f) for f in seen] == [double] and run_hooks.cloned_from(double) is None
    assert run_hooks.jit_compile(seen[0]) is True  # the clone compiles as the function does


def test_keras_shows_the_step_function_it_compiles(supported):
    made_for = {}

    def handler(model, step, made, keras_function):
        made_for[step.__name__] = made
        return keras_function

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    undo = run_hooks.on_keras_step(handler)
    try:
        model.fit(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"), epochs=1, verbose=0)
    finally:
        undo()
    one_step = made_for["train_step"][0]
    assert run_hooks.python_function(one_step).__name__ == "one_step_on_data"
    assert run_hooks.jit_compile(one_step) is True


def test_tensorflow_file_writes_are_seen(supported, tmp_path):
    seen = []
    undo = run_hooks.on_tf_file_write(lambda path, call: seen.append((call, path)))
    try:
        tf.io.gfile.makedirs(str(tmp_path / "a" / "b"))
        with tf.io.gfile.GFile(str(tmp_path / "a" / "f.txt"), "w") as handle:
            handle.write("x")
    finally:
        undo()
    calls = [call for call, _ in seen]
    assert calls == ["RecursivelyCreateDir", "WritableFile"] and (tmp_path / "a" / "f.txt").read_text() == "x"


@pytest.mark.parametrize("jit", [True, False])
def test_keras_shows_the_predict_step_it_compiles_and_takes_its_function(supported, jit):
    seen = []

    def handler(model, made, predict_function):
        def function(batches):
            seen.append([type(b).__name__ for b in batches])
            return predict_function(batches)
        seen.append([(run_hooks.python_function(f).__name__, run_hooks.jit_compile(f)) for f in made])
        return function

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse", jit_compile=jit)
    undo = run_hooks.on_keras_predict(handler)
    try:
        assert model.predict_on_batch(np.ones((4, 3), "float32")).shape == (4, 2)
        assert model.predict(np.ones((6, 3), "float32"), batch_size=4, verbose=0).shape == (6, 2)
    finally:
        undo()
    if jit:  # XLA compiles predict_step alone, inside the function that takes the list of batches
        assert seen[0] == [("one_step_on_data", True), ("one_step_on_data_distributed", None)]
    else:
        assert seen[0] == [("one_step_on_data_distributed", None)]
    assert seen[1:] == [["tuple"], ["EagerTensor"], ["EagerTensor"]]  # predict_on_batch: ((x,),); predict: [x] twice


def test_functions_made_and_variables_of_a_first_trace_are_seen(supported):
    made, variables = [], []
    undos = [run_hooks.on_function_made(made.append), run_hooks.on_variable_in_trace(lambda *seen: variables.append(seen))]
    try:
        class Sum(tf.Module):
            def __init__(self):
                self.total = None

            @tf.function(jit_compile=True)
            def add(self, x):
                if self.total is None:
                    self.total = tf.Variable(x)  # from the argument: TensorFlow cannot lift it out
                return self.total

        running = Sum()  # a method's tf.function holds its instance weakly
        with pytest.raises(run_hooks.UNLIFTABLE):
            running.add.get_concrete_function(tf.ones([2]))
    finally:
        [undo() for undo in undos]
    assert made and run_hooks.python_function(made[0]).__name__ == "add"
    [(frames, initial_value)] = variables  # mapped back through autograph to this file's line
    assert initial_value.name == "x:0"
    assert any(f.filename == __file__ and "tf.Variable(x)" in open(__file__).read().splitlines()[f.lineno - 1]
               for f in frames)


def test_a_tf_function_the_users_line_makes_is_told_from_one_a_library_makes(supported):
    """``tf.function(layer)`` called on a line of the user's (this file) runs TensorFlow's function API between
    that line and the new object; Keras making its train function does not."""
    from xlalint.backend.run.guard import user_site

    callees = []
    undo = run_hooks.on_function_made(lambda function: callees.append(user_site(1)[1]))
    try:
        tf.function(keras.layers.Dense(2), jit_compile=True)
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        model.make_train_function()
    finally:
        undo()
    assert len(callees) >= 2 and run_hooks.is_tf_function_api(callees[0]), callees
    assert not [callee for callee in callees[1:] if run_hooks.is_tf_function_api(callee)], callees


def test_dataset_batches_and_their_loops_are_seen(supported):
    batches, loops = [], []
    undos = [run_hooks.on_dataset_batch(lambda *seen: batches.append(seen[2:4])),
             run_hooks.on_dataset_iter(lambda iterator, dataset: loops.append(dataset))]
    try:
        dataset = tf.data.Dataset.range(10).batch(4).prefetch(1)
        assert [len(x) for x in dataset] == [4, 4, 2]
    finally:
        [undo() for undo in undos]
    assert batches == [(4, False)] and loops == [dataset]
    [batched] = run_hooks.dataset_inputs(dataset)
    assert batched.element_spec.shape.as_list() == [None] and len(run_hooks.dataset_inputs(batched)) == 1


def test_tf_keras_step_functions_are_recognized(supported):
    """tf-keras's fit, evaluate and predict each call a tf.function of its own per step, closing over the model."""
    tf_keras = pytest.importorskip("tf_keras", reason="tf-keras is not installed")
    model = tf_keras.Sequential([tf_keras.Input((3,)), tf_keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    seen = []

    def handler(function, original, args, kwargs):
        seen.append(run_hooks.tf_keras_step(run_hooks.python_function(function)))
        return original(function, *args, **kwargs)

    undo = run_hooks.on_function_call(handler)
    try:
        x, y = np.ones([4, 3], np.float32), np.ones([4, 1], np.float32)
        model.fit(x, y, verbose=0)
        model.evaluate(x, y, verbose=0)
        model.predict(x, verbose=0)
    finally:
        undo()
    assert [found for found in seen if found] == [(model, "train_step"), (model, "test_step"),
                                                  (model, "predict_step")]
