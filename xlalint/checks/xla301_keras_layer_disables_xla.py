"""XLA301: a Keras layer that makes Keras run the whole model without XLA (a model not compiled in the file)."""

from __future__ import annotations

from xlalint.checks.base import Context, Hit, Rule, layer_names
from xlalint.core.opgraph import OpGraph

_GPU_ONLY = ("On a GPU, Keras marks the {cls} {names} as not supporting XLA (it may pick its cuDNN kernel, which "
             "XLA cannot compile) and so runs the whole model without XLA")
_ALWAYS = "Keras marks the {cls} {names} as not supporting XLA and so runs the whole model without XLA"
_SUFFIX = ": Model.compile(jit_compile=True) warns and falls back, and jit_compile='auto' never turns XLA on"


def check(graph: OpGraph, ctx: Context):
    if ctx.keras is not None:  # a compiled model: Keras' decision on it is XLA302/XLA303, once per model
        return
    sites: dict[tuple, tuple[dict, set]] = {}  # outer layers come first: one finding per construction line
    for layer in ctx.keras_layers:
        if ctx.device in layer["devices"]:
            sites.setdefault((layer["file"], layer["line"]), (layer, set()))[1].add(layer["name"])
    for site, (layer, names) in sites.items():
        gpu_only = layer["devices"] == ["gpu"]
        message = (_GPU_ONLY if gpu_only else _ALWAYS).format(names=layer_names(names), cls=layer["class"]) + _SUFFIX
        hint = ("Pass use_cudnn=False to keep XLA on (a compiled loop instead of the cuDNN kernel), and "
                "compare step times with `xlalint --verify`." if gpu_only else
                "Apply the layer in the input pipeline (`dataset.map(layer)`) and keep it out of the model "
                "that is trained with XLA.")
        yield Hit("XLA301", message, hint, site=site if layer["file"] else None, api=layer["class"])


RULE = Rule("XLA301", "keras-layer-disables-xla", "warning",
            "A Keras layer makes Keras train and run the whole model without XLA.", check=check,
            disables_xla=True, said_when_off=True)
