"""``xlalint --static``: XLA blockers found by API name, without importing TensorFlow or running code.

``run_static(paths, device)`` gives a ``Report`` like the full mode's (same codes and ``Finding``s),
from a libcst pass (``scan``) and a table generated from TensorFlow (``api_table``).
"""

__all__ = ["run_static", "scan_file"]


def __getattr__(name: str):
    # Imported on first use, so that the rule registry can import ``xlalint.static.scan`` early.
    if name == "run_static":
        from xlalint.static.run import run_static
        return run_static
    if name == "scan_file":
        from xlalint.static.scan import scan_file
        return scan_file
    raise AttributeError(name)
