"""xlalint: find what keeps TensorFlow code from compiling under XLA, before the run."""

from xlalint.version import VERSION as __version__

__all__ = ["__version__", "assert_xla_compatible", "check"]


def __getattr__(name: str):
    """The API on first use: the tracing server and other children import the package without it
    (libcst, networkx and the rules take a second to import, before TensorFlow even starts)."""
    if name in ("assert_xla_compatible", "check"):
        from xlalint import api

        return getattr(api, name)
    raise AttributeError(f"module 'xlalint' has no attribute {name!r}")
