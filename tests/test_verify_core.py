"""verify_entry on real TensorFlow (CPU): compile, agree, restore state, count compilations.

Timings are printed (``pytest -s``), never asserted: this machine is small and shared.
"""

from __future__ import annotations

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from xlalint.backend.discover import Candidate
from xlalint.backend.verify.peak_memory import ALLOCATOR, CHILD_RSS, allocator_peak
from xlalint.backend.verify.compare import FIELDS, count_compilations, make_inputs, verify_entry

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

FAST = {"device": "cpu", "steps": 3, "runs": 2}


def _candidate(f, *specs, kind="function") -> Candidate:
    return Candidate(f.__name__, 1, kind, function=tf.function(f), python_function=f, specs=list(specs))


def _verify(candidate, **kwargs) -> dict:
    result = verify_entry(candidate, **{**FAST, **kwargs})
    print(f"\n{candidate.name}: {json.dumps(result)}")
    assert tuple(result) == FIELDS
    json.dumps(result, allow_nan=False)  # JSON-ready as it is
    return result


def _mlp_and_conv():
    rng = np.random.default_rng(1)
    w1 = tf.constant(rng.standard_normal([16, 32]), tf.float32)
    w2 = tf.constant(rng.standard_normal([32, 4]), tf.float32)
    kernel = tf.constant(rng.standard_normal([3, 3, 3, 8]), tf.float32)

    def forward(x, image):
        hidden = tf.nn.relu(x @ w1)
        features = tf.nn.relu(tf.nn.conv2d(image, kernel, strides=1, padding="SAME"))
        return {"logits": hidden @ w2, "pooled": tf.reduce_mean(features, axis=[1, 2])}

    return forward


def _raises(*_):
    raise ValueError("Allocator stats not available for device 'CPU:0'")


# The two ways TF 2.21 CPU allocators answer, depending on the machine (oneDNN or not).
ALLOCATORS = {"raises": {"reset_memory_stats": _raises, "get_memory_info": _raises},
              "zeros": {"reset_memory_stats": lambda _: None, "get_memory_info": lambda _: {"current": 0, "peak": 0}}}


@pytest.fixture(params=sorted(ALLOCATORS))
def cpu_allocator(request, monkeypatch):
    for name, fake in ALLOCATORS[request.param].items():
        monkeypatch.setattr(tf.config.experimental, name, fake)
    return request.param


def test_an_allocator_without_statistics_gives_no_figure(cpu_allocator):
    called = []
    assert allocator_peak(lambda: called.append(1), "CPU:0") is None
    assert called in ([], [1])


def test_compilable_forward_compiles_and_agrees(cpu_allocator):
    candidate = _candidate(_mlp_and_conv(), tf.TensorSpec([None, 16], tf.float32),
                           tf.TensorSpec([2, 8, 8, 3], tf.float32))
    result = _verify(candidate)
    assert result["device"] == "CPU:0"
    assert result["compiled"] is True and result["error"] is None and result["error_op"] is None
    assert result["allclose"] is True and 0 <= result["max_abs_diff"] < 1e-3
    assert result["training_step"] is False
    assert result["compilations"] == 1
    assert result["compile_s"] > 0 and result["xla_step_s"] > 0 and result["tf_step_s"] > 0
    assert result["speedup"] == pytest.approx(result["tf_step_s"] / result["xla_step_s"])
    # The same method whatever the allocator says, and never 0 (null: below one page, for so small a model).
    assert result["memory_method"] == CHILD_RSS
    assert all(peak is None or peak > 0 for peak in (result["xla_peak_bytes"], result["tf_peak_bytes"]))


def _conv_stack_step():
    """A training step (the kernel is a variable it updates): four convolutions over the images."""
    kernel = tf.Variable(np.random.default_rng(2).standard_normal([3, 3, 16, 16]) * 0.1, dtype=tf.float32)

    def conv_stack_step(images):
        with tf.GradientTape() as tape:
            features = images
            for _ in range(4):
                features = tf.nn.relu(tf.nn.conv2d(features, kernel, strides=1, padding="SAME"))
            loss = tf.reduce_mean(features)
        kernel.assign_sub(0.01 * tape.gradient(loss, kernel))
        return loss

    return conv_stack_step


def test_cpu_peak_memory_grows_with_the_activations():
    peaks = {}
    for side in (16, 192):  # one activation: 64 KiB, then 18 MiB
        result = _verify(_candidate(_conv_stack_step(), tf.TensorSpec([8, side, side, 16], tf.float32)), steps=1,
                         runs=1)
        assert result["compiled"] is True and result["training_step"] is True and result["memory_method"] == CHILD_RSS
        peaks[side] = (result["xla_peak_bytes"], result["tf_peak_bytes"])
    print(f"conv stack peaks (XLA, TF) by image side: {peaks}")
    assert peaks[192][0] > peaks[16][0] + (8 << 20) and peaks[192][1] > peaks[16][1] + (8 << 20)


@pytest.mark.skipif(not tf.config.list_physical_devices("GPU"), reason="needs a GPU")
def test_gpu_peak_memory_is_the_allocators():
    result = _verify(_candidate(_conv_stack_step(), tf.TensorSpec([8, 128, 128, 16], tf.float32)), device="gpu")
    assert result["device"] == "GPU:0" and result["compiled"] is True
    assert result["memory_method"] == ALLOCATOR
    assert result["xla_peak_bytes"] >= 8 << 20 and result["tf_peak_bytes"] >= 8 << 20  # at least one activation


def test_host_callback_does_not_compile_and_names_pyfunc():
    def host_callback(x):
        return tf.numpy_function(lambda a: a * 2, [x], tf.float32)

    result = _verify(_candidate(host_callback, tf.TensorSpec([4], tf.float32)))
    assert result["compiled"] is False
    assert "PyFunc" in result["error"] and result["error"].startswith("Detected unsupported operations")
    assert "_XlaMustCompile" not in result["error"]
    assert result["error_op"] == "PyFunc"
    assert result["compilations"] == 0
    assert result["allclose"] is None and result["xla_step_s"] is None and result["speedup"] is None


def test_non_constant_shape_names_the_op():
    def random_size(x):
        return tf.reshape(x, [tf.random.uniform([], 1, 3, dtype=tf.int32), -1])

    result = _verify(_candidate(random_size, tf.TensorSpec([8], tf.float32)))
    assert result["compiled"] is False
    assert result["error"].startswith("Input 1 to node `Reshape` with op Reshape must be a compile-time constant")
    assert result["error_op"] == "Reshape"


def test_training_step_agrees_and_leaves_the_variables_as_they_were():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    tracked = model.variables + optimizer.variables
    before = [v.numpy() for v in tracked]
    result = _verify(_candidate(train_step, tf.TensorSpec([None, 6], tf.float32), tf.TensorSpec([None], tf.int32)))
    assert result["compiled"] is True and result["training_step"] is True
    assert result["allclose"] is True and result["max_abs_diff"] < 1e-3
    assert result["compilations"] == 1  # the same executable for every step
    assert int(optimizer.iterations.numpy()) == 0
    for variable, value in zip(tracked, before):
        np.testing.assert_array_equal(variable.numpy(), value)


def test_value_specialized_reshape_compiles_once_per_value():
    def rows(x, n):
        return tf.reshape(x, [n, -1]) * 2.0

    candidate = _candidate(rows, tf.TensorSpec([8, 4], tf.float32), tf.TensorSpec([], tf.int32))
    result = _verify(candidate)
    assert result["compiled"] is True and result["allclose"] is True and result["compilations"] == 1
    two_values = [make_inputs(candidate.specs, scalar_int=2), make_inputs(candidate.specs, scalar_int=4)]
    compilations = count_compilations(candidate, two_values, device="cpu")
    print(f"rows with n=2 then n=4: {compilations} compilations")
    assert compilations >= 2
    # One trace serves both values: the tracing count could not have shown this.
    traced = tf.function(rows, jit_compile=True)
    for inputs in two_values:
        traced(*inputs)
    assert traced.experimental_get_tracing_count() == 1


def test_make_inputs_is_seeded_and_dtype_aware():
    specs = [tf.TensorSpec([None, 3], tf.float16), tf.TensorSpec([], tf.int64), tf.TensorSpec([5], tf.int32),
             tf.TensorSpec([2], tf.bool)]
    first, again = make_inputs(specs, seed=3, fill_dim=4), make_inputs(specs, seed=3, fill_dim=4)
    assert [t.dtype for t in first] == [s.dtype for s in specs]
    assert first[0].shape == (4, 3) and int(first[1]) == 2
    assert set(first[2].numpy()) <= {0, 1, 2}
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_strings_and_missing_devices_cannot_be_verified():
    def echo(s):
        return s

    result = _verify(_candidate(echo, tf.TensorSpec([2], tf.string)))
    assert result["compiled"] is False
    assert result["error"] == "cannot verify: no random inputs for string arguments"
    if not tf.config.list_physical_devices("GPU"):
        result = _verify(_candidate(echo, tf.TensorSpec([2], tf.float32)), device="gpu")
        assert result["error"] == "cannot verify: no GPU is visible to TensorFlow" and result["device"] is None


def test_random_ops_leave_agreement_undecided():
    def noisy(x):
        return x + tf.random.stateless_uniform([4], seed=[1, 2])

    result = _verify(_candidate(noisy, tf.TensorSpec([4], tf.float32)))
    assert result["compiled"] is True and result["allclose"] is None and result["max_abs_diff"] >= 0


def test_nested_input_signature_is_packed_for_the_call():
    @tf.function(input_signature=[(tf.TensorSpec([3], tf.float32), tf.TensorSpec([3], tf.float32))])
    def pair_sum(pair):
        return pair[0] + pair[1]

    candidate = Candidate("pair_sum", 1, "function", function=pair_sum, python_function=pair_sum.python_function,
                          specs=tf.nest.flatten(pair_sum.input_signature), use_signature=True)
    result = _verify(candidate)
    assert result["compiled"] is True and result["allclose"] is True
