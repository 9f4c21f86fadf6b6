"""XLA303: the model is compiled with jit_compile=True, and Keras turns XLA off."""

from __future__ import annotations

from xlalint.checks.base import Context, Rule, keras_decision_hit as decision_hit

_HINTS = {
    "layer": "Apply the layer in the input pipeline (`dataset.map(layer)`) and keep it out of the model that "
             "is trained with XLA.",
    "other": "Remove what Keras names (run_eagerly=True, op determinism) to get XLA, or drop jit_compile=True "
             "to say what really runs.",
}


def check(graph, ctx: Context):
    decided = ctx.keras
    if decided and not decided["jit"] and decided["requested"] is True:
        yield decision_hit("XLA303", f"you asked for XLA (jit_compile=True), but Keras runs `{decided['model']}` "
                           f"without it on {ctx.device}: {decided['reason']}", _HINTS, decided)


RULE = Rule("XLA303", "keras-drops-jit-compile", "warning",
            "The model is compiled with jit_compile=True, and Keras runs it without XLA.", check=check,
            said_when_off=True)
