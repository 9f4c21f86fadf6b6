"""The Python API, in-process on objects the test already holds."""

from __future__ import annotations

import os
from dataclasses import asdict

import pytest
import tensorflow as tf

import groundtruth as gt
import xlalint
from helpers import REPO, run_json

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

FIXTURES = REPO / "fixtures"


def test_check_reports_every_blocker_of_a_tf_function_at_its_line():
    fn = gt.load_module(FIXTURES / "multi_blocker.py").preprocess_and_score
    report = xlalint.check(fn, device="cpu")
    assert not report.ok and report.entries[0].verdict == "incompatible"
    assert {(f.code, f.line) for f in report.findings} == gt.expected(FIXTURES / "multi_blocker.py")
    assert all(f.path.endswith("multi_blocker.py") and f.op_type for f in report.findings)
    assert gt.compile_error(fn) is not None


def test_check_plain_function_with_specs_of_each_kind_agrees_with_compiler():
    def scale(x, n):
        return tf.reshape(x * 2.0, [n, -1])

    for specs in (("float32[4,6]", "int32[]"),
                  (tf.TensorSpec([4, 6], tf.float32), tf.TensorSpec([], tf.int32)),
                  (tf.ones([4, 6]), tf.constant(2))):
        report = xlalint.check(scale, *specs, device="cpu")
        assert report.ok and [f.code for f in report.findings] == ["XLA102"]
    jitted = tf.function(scale, jit_compile=True)
    assert jitted(tf.ones([4, 6]), tf.constant(2)).shape == (2, 12)  # compiles, specialized on n


def test_check_keras_model_names_the_layer_at_the_calling_line():
    model = gt.load_module(FIXTURES / "keras_functional.py").model
    report = xlalint.check(model, device="cpu")
    assert not report.ok
    finding = report.findings[0]
    assert "mix_up" in finding.message and os.path.abspath(finding.path) == __file__
    with pytest.raises(Exception, match="StatelessRandomGamma"):
        tf.function(model, jit_compile=True).experimental_get_compiler_ir(tf.ones([1, 8, 8, 3]))(stage="hlo")


def test_assert_xla_compatible_lists_findings_or_passes():
    good = gt.load_module(REPO / "rules/XLA001/good.py").scale_on_device
    assert xlalint.assert_xla_compatible(good, device="cpu").ok
    bad = gt.load_module(FIXTURES / "multi_blocker.py").preprocess_and_score
    with pytest.raises(AssertionError) as failure:
        xlalint.assert_xla_compatible(bad, device="cpu")
    assert failure.value.args[0].count("XLA001") == 4 and "multi_blocker.py:10:13" in failure.value.args[0]


def test_check_rejects_bad_arguments():
    with pytest.raises(ValueError, match="device must be one of cpu, gpu, tpu, not 'fpga'"):
        xlalint.check(lambda x: x, "float32[2]", device="fpga")
    with pytest.raises(ValueError, match="mode must be one of auto, jit, autocluster, not 'fast'"):
        xlalint.check(lambda x: x, "float32[2]", mode="fast")
    with pytest.raises(ValueError, match="input_signature"):
        xlalint.check(tf.function(lambda x: x))


def test_check_can_verify_in_process():
    fn = gt.load_module(REPO / "rules/XLA001/good.py").scale_on_device
    report = xlalint.check(fn, device="cpu", verify="cpu")
    verify = report.entries[0].verify
    assert verify["compiled"] is True and verify["allclose"] is True and verify["device"] == "CPU:0"
    assert not [f for f in report.findings if f.code.startswith("XLA9")]


def test_check_in_autocluster_mode_predicts_the_clusters_the_command_line_predicts():
    path = FIXTURES / "autocluster/split_by_numpy_function.py"
    fn = gt.load_module(path).split_by_numpy_function
    jit, auto = xlalint.check(fn, device="cpu"), xlalint.check(fn, device="cpu", mode="autocluster")
    cli, _ = run_json(f"{path}::split_by_numpy_function", "--device", "cpu", "--mode", "autocluster", "--no-cache")
    [expected] = cli["entries"]
    predicted = auto.entries[0].autocluster
    assert jit.entries[0].autocluster is None and predicted["clusters"]
    for key in ("clusters", "compiled_ops", "total_ops"):
        assert predicted[key] == expected["autocluster"][key], key
    assert [(s["op_type"], s["line"]) for s in predicted["splitters"]] == [
        (s["op_type"], s["line"]) for s in expected["autocluster"]["splitters"]]
    # under auto-clustering the blocker can be left out of the clusters: a jit_scope fix, as the CLI offers
    assert [f.fix for f in jit.findings if f.code == "XLA001"] == [None]
    offered = [f.fix for f in auto.findings if f.code == "XLA001"]
    assert offered and None not in offered
    assert [asdict(fix) for fix in offered] == [f["fix"] for f in cli["findings"]
                                               if f["code"] == "XLA001" and f["entry"] == "split_by_numpy_function"]


def test_check_under_auto_clustering_leaves_the_callback_out_instead_of_failing():
    """The callback that fails jit_compile=True (asked of XLA) runs under auto-clustering: no error.
    (tests/test_autocluster.py compares these clusters with the ones TensorFlow forms.)"""
    fn = gt.load_module(FIXTURES / "autocluster" / "split_by_numpy_function.py").split_by_numpy_function
    assert gt.compile_error(fn) is not None
    report = xlalint.check(fn, device="cpu", mode="autocluster")
    (entry,) = report.entries
    assert report.ok and (entry.verdict, entry.xla_mode) == ("runs", "auto-clustering")
    assert [(f.code, f.severity) for f in report.findings] == [("XLA001", "info")]
    assert len(entry.autocluster["clusters"]) == 2
    assert xlalint.check(fn, device="cpu").entries[0].verdict == "incompatible"  # default: as if jit_compile=True


def test_check_reports_what_keras_decides_for_a_model_as_the_command_does():
    """XLA301 (a layer that keeps Keras off XLA) and XLA302 (compiled with "auto", trained without XLA on a
    CPU) reach the API too: the in-process tracer records Keras's data as the tracing server does. Keras's
    own decision, asked after the check, is the truth."""
    layer_off = gt.load_module(REPO / "rules/XLA301/bad.py").augmented_classifier
    report = xlalint.check(layer_off, device="cpu")
    [finding] = [f for f in report.findings if f.code == "XLA301"]
    assert "RandomZoom" in finding.message
    layer_off.compile(optimizer="adam", loss="mse", jit_compile=True)
    assert layer_off.jit_compile is False  # Keras dropped the jit_compile=True it was given
    auto = gt.load_module(REPO / "rules/XLA302/bad.py").classifier
    report = xlalint.check(auto, device="cpu")
    assert [f.code for f in report.findings if f.code == "XLA302"] == ["XLA302"]
    assert auto.jit_compile is False  # "auto" on this machine, without a GPU: no XLA
