"""What a run reports for a model checked as part of the entry that calls it (the entry's ``covers``),
on hand-built records: no TensorFlow."""

from __future__ import annotations

from graph_builder import SUPPORT, GraphBuilder
from xlalint.engine.analysis import file_findings
from xlalint.core.results import Report
from xlalint.settings.table import Options
from xlalint.core.wire import FORMAT, EntryRecord, entry_record, file_result

SOURCE = "import keras\n\nzoom = keras.layers.RandomZoom(0.1)\nmodel = keras.Sequential([zoom])\n\ndef step(x): ...\n"


def _covered_model(path: str, traced: bool = False) -> EntryRecord:
    """The record the worker keeps for a model a step called: no trace, the layer Keras keeps off XLA;
    ``traced``: the record of the same model traced as an entry of its own."""
    model = entry_record("model", 4, "keras-model", None, [{"dtype": "float32", "shape": [2, 4]}],
                         graph=_relu_graph("model", 4) if traced else None)
    model["keras_layers"] = [{"name": "zoom", "class": "RandomZoom", "file": path, "line": 3,
                              "devices": ["cpu", "gpu", "tpu"]}]
    return model


def _relu_graph(name: str, line: int) -> dict:
    graph = GraphBuilder(name)
    graph.function(name, [graph.op("relu", "Relu", [graph.arg("x", shape=[2, 4])], shape=[2, 4], line=line)])
    return {"format": FORMAT, "root": name, "num_args": graph.num_args, "functions": graph.functions,
            "nodes": graph.nodes}


def _step(path: str) -> EntryRecord:
    return entry_record("step", 6, "tf.function", None, [{"dtype": "float32", "shape": [2, 4]}],
                        graph=_relu_graph("step", 6))


def _run(path: str, entries: list[EntryRecord]):
    report = Report(device="cpu")
    produced = file_findings(report, file_result(path, entries=entries), SUPPORT, Options(device="cpu"), True)
    return report, produced


def test_a_covered_model_is_no_entry_and_its_keras_finding_is_said_as_before(tmp_path):
    path = str(tmp_path / "train.py")
    (tmp_path / "train.py").write_text(SOURCE)
    step = _step(path)
    step["covers"] = [_covered_model(path)]
    report, produced = _run(path, [step])
    assert [e.name for e in report.entries] == ["step"]
    (covered,) = [p for p in produced if p.finding.code == "XLA301"]
    assert covered.entries == () and covered.entry_site == (path, 4)  # no verdict; a comment on its line covers it
    assert (covered.finding.line, covered.finding.entry) == (3, "model")
    assert "RandomZoom" in covered.finding.message and "`zoom`" in covered.finding.message
    report, alone = _run(path, [_covered_model(path, traced=True)])  # the model traced as an entry of its own
    assert [e.name for e in report.entries] == ["model"]
    assert [p.finding for p in alone if p.finding.code == "XLA301"] == [covered.finding]


def test_a_covered_model_counts_as_reached_for_the_never_less_than_static_pass(tmp_path):
    """Its name is reached through the entry that covers it, so its lines get no "not traced" stand-ins."""
    from xlalint.engine.static_fallback import reached

    path = str(tmp_path / "model.py")
    step = _step(path)
    step["covers"] = [_covered_model(path)]
    names, _ = reached([step])
    assert {"step", "model"} <= names
