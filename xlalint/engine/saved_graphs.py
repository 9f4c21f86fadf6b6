"""``--save-graphs``: a traced entry written as JSON, so rules can run on it again without TensorFlow."""

from __future__ import annotations

import json
import os

from xlalint.inputs.files import display_path
from xlalint.core.wire import EntryRecord


def save_entry(directory: str, path: str, raw: EntryRecord, tensorflow: str | None) -> None:
    """Write a traced entry (graph included) so rules can be rerun on it without TensorFlow.

    Source paths are written as ``display_path`` gives them (relative to the working directory).
    """
    os.makedirs(directory, exist_ok=True)
    stem = os.path.splitext(display_path(path))[0].strip(os.sep).replace(os.sep, "__")
    target = os.path.join(directory, f"{stem}.{raw['name']}.json")
    graph = raw["graph"]
    assert graph is not None, "only a traced entry is saved"
    nodes = [{**node, "frames": [[display_path(f), line, fn] for f, line, fn in node["frames"]],
              "layer": node["layer"] and {**node["layer"], "file": display_path(node["layer"]["file"])}}
             for node in graph["nodes"]]
    layers = [{**layer, "file": layer["file"] and display_path(layer["file"])} for layer in raw.get("keras_layers", ())]
    saved = {**raw, "graph": {**graph, "nodes": nodes}, "keras_layers": layers,
             "path": display_path(path), "tensorflow": tensorflow}
    saved.pop("covers", None)  # the models it checks have no graph of their own to save
    if raw.get("keras"):
        saved["keras"] = _keras_places(raw["keras"])
    with open(target, "w", encoding="utf-8") as out:
        json.dump(saved, out, indent=None, separators=(",", ":"))


def _keras_places(keras: dict) -> dict:
    """Keras' decisions with their places (the compile call, each deciding layer) as ``display_path`` gives them."""
    def place(where: dict | None) -> dict | None:
        return where and {**where, "file": where["file"] and display_path(where["file"])}

    return {**keras, "compile": place(keras.get("compile")),
            "devices": {device: {**decided, "layer": place(decided["layer"])} for device, decided in keras["devices"].items()}}
