"""A Keras layer or model class of the user's own is placed where the user makes (or compiles) it,
not at the ``super()`` line inside its class: one xlalint run, checked against Keras' own decisions."""

from __future__ import annotations

import pytest

import groundtruth as gt
from helpers import REPO, run_json

pytestmark = pytest.mark.tf  # runs xlalint on TensorFlow code

FIXTURE = REPO / "fixtures" / "keras_custom_layer.py"


@pytest.fixture(scope="module")
def report() -> dict:
    found, _ = run_json(str(FIXTURE), "--device", "cpu", "--no-cache")
    return found


@pytest.fixture(scope="module")
def module():
    return gt.load_module(FIXTURE)


def _places(report: dict) -> dict[tuple[str, int], set[str]]:
    places: dict[tuple[str, int], set[str]] = {}
    for finding in report["findings"]:
        if finding["code"].startswith("XLA30"):
            places.setdefault((finding["code"], finding["line"]), set()).update(finding["entries"])
    return places


def test_each_keras_finding_sits_where_the_user_makes_or_compiles_the_object(report):
    assert set(_places(report)) == gt.expected(FIXTURE)


def test_the_layer_built_in_a_model_init_and_the_one_built_at_module_level_each_name_their_model(report):
    lines = {line for code, line in gt.expected(FIXTURE) if code == "XLA301"}
    assert {line: entries for (code, line), entries in _places(report).items() if code == "XLA301"} == dict(
        zip(sorted(lines), [{"classifier"}, {"features"}]))


def test_keras_itself_drops_xla_for_both_models_with_the_custom_layer(module):
    assert not gt.keras_keeps_xla(module.classifier)
    assert not gt.keras_keeps_xla(module.features)


def test_keras_resolves_the_overridden_compiles_auto_by_the_devices_it_sees(module):
    import tensorflow as tf

    accelerated = any(d.device_type != "CPU" for d in tf.config.list_physical_devices())
    assert module.tuned.compiled and module.tuned.jit_compile is accelerated  # "auto": XLA only off the CPU
