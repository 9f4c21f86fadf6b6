"""``xlalint --static``: XLA blockers found by API name, without importing TensorFlow or running code.

``run_static(paths, device)`` gives a ``Report`` like the full mode's (same codes and ``Finding``s),
from a libcst pass (``scan``, over ``index``, ``compiled``, ``api_calls`` and the source rules'
``check_source``; ``positions``) and a table generated from TensorFlow (``api_table``).
"""

__all__ = ["run_static"]


def __getattr__(name: str):
    # Imported on first use: the source rules import ``xlalint.static.index`` while the rule registry
    # loads, and the pass itself imports the registry.
    if name == "run_static":
        from xlalint.static.run import run_static
        return run_static
    raise AttributeError(name)
