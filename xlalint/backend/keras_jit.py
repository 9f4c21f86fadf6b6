"""Which layers of a Keras model make Keras run the whole model without XLA.

Keras 3 keeps XLA off for a model when any of its layers has ``supports_jit =
False`` (``Model.compile(jit_compile=True)`` warns and proceeds without it;
``"auto"`` turns it off silently). Preprocessing layers set it on every device;
LSTM and GRU set it only where Keras sees a GPU, so they are judged by Keras' own cuDNN rule
whatever machine traces them.
"""

from __future__ import annotations

import importlib

from xlalint.core.support import DEVICES

CUDNN_KERNEL = "CudnnRNNV3"  # what Keras' TensorFlow backend calls for LSTM and GRU on a GPU


def runs_cudnn_on_gpu(layer) -> bool:
    """Whether Keras runs this LSTM/GRU as its cuDNN op on a GPU (recurrent dropout keeps the loop)."""
    return cudnn_eligible(layer) and not getattr(layer, "recurrent_dropout", 0)


def cudnn_eligible(layer) -> bool:
    """Keras' rule, at construction, for LSTM/GRU on a machine with a GPU (private, read here):
    eligible layers are marked ``supports_jit = False`` there."""
    cell = getattr(layer, "cell", None)
    if getattr(layer, "use_cudnn", None) not in (True, "auto") or cell is None:
        return False  # any other layer: this runs at every layer call, so it answers first
    import keras

    try:  # by module name: the package's `rnn` attribute is a function of the same name
        rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    except ImportError:  # another Keras layout: no GPU-only verdict
        return False
    if isinstance(layer, keras.layers.LSTM):
        return rnn._do_lstm_arguments_support_cudnn(cell.activation, cell.recurrent_activation,
                                                   layer.unroll, cell.use_bias)
    if isinstance(layer, keras.layers.GRU):
        return rnn._do_gru_arguments_support_cudnn(cell.activation, cell.recurrent_activation,
                                                  layer.unroll, cell.use_bias, cell.reset_after)
    return False


def layers_without_jit(model, site_of) -> list[dict]:
    """``{"name", "class", "file", "line", "devices"}`` for each layer that turns XLA off.

    ``site_of(layer)`` gives the user's ``(file, line)`` that constructed it, or None.
    """
    import keras

    found = []
    for layer in model._flatten_layers():
        if isinstance(layer, (keras.layers.LSTM, keras.layers.GRU)):  # decided by the GPU, not this machine
            if not cudnn_eligible(layer):
                continue
            devices: tuple[str, ...] = ("gpu",)
        elif not layer.supports_jit:
            devices = DEVICES
        else:
            continue
        file, line = site_of(layer) or (None, None)
        found.append({"name": layer.name, "class": type(layer).__name__, "file": file, "line": line,
                      "devices": list(devices)})
    return found
