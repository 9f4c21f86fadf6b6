"""Which layers of a Keras model make Keras run the whole model without XLA.

Keras 3 keeps XLA off for a model when any of its layers has ``supports_jit =
False`` (``Model.compile(jit_compile=True)`` warns and proceeds without it;
``"auto"`` turns it off silently). Preprocessing layers set it on every device;
LSTM and GRU set it only where their cuDNN kernel would run, i.e. on a GPU.
"""

from __future__ import annotations

import importlib

import keras

ALL_DEVICES = ("cpu", "gpu", "tpu")
CUDNN_KERNEL = "CudnnRNNV3"  # what Keras' TensorFlow backend calls for LSTM and GRU on a GPU


def uses_cudnn_on_gpu(layer) -> bool:
    """What Keras decides for LSTM/GRU on a machine with a GPU (its private rule, read here)."""
    try:  # by module name: the package's `rnn` attribute is a function of the same name
        rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    except ImportError:  # another Keras layout: no GPU-only verdict
        return False
    cell = getattr(layer, "cell", None)
    if getattr(layer, "use_cudnn", None) not in (True, "auto") or cell is None:
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
    found = []
    for layer in model._flatten_layers():
        if not layer.supports_jit:
            devices = ALL_DEVICES
        elif uses_cudnn_on_gpu(layer):
            devices = ("gpu",)
        else:
            continue
        file, line = site_of(layer) or (None, None)
        found.append({"name": layer.name, "class": type(layer).__name__, "file": file, "line": line,
                      "devices": list(devices)})
    return found
