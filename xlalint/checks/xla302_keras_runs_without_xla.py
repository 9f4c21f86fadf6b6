"""XLA302: Keras runs a compiled model without XLA on the target device (the user did not ask for it)."""

from __future__ import annotations

from xlalint.checks.base import Context, Rule, keras_decision_hit as decision_hit

_HINTS = {
    "auto": "jit_compile='auto' turns XLA on only on a GPU machine: pass jit_compile=True to compile it on "
            "this device too, and compare with `xlalint --verify`.",
    "strategy": "Keep it off while the model's variables sit on several devices: jit_compile=True would fail there "
                "(XLA305). Compile one replica's computation with jit_compile=True instead, if you want XLA.",
    "layer": "Apply the layer in the input pipeline (`dataset.map(layer)`) so that the model itself can be "
             "compiled with XLA.",
    "other": "Pass jit_compile=True to Model.compile if you want XLA, and compare with `xlalint --verify`.",
}


def check(graph, ctx: Context):
    decided = ctx.keras
    if decided and not decided["jit"] and decided["requested"] is not True:
        yield decision_hit("XLA302", f"Keras runs `{decided['model']}` (fit, evaluate and predict) without XLA on "
                           f"{ctx.device}: {decided['reason']}", _HINTS, decided)


RULE = Rule("XLA302", "keras-runs-without-xla", "info",
            "Keras runs a compiled model without XLA on the target device.", check=check, said_when_off=True)
