"""xlalint: find what keeps TensorFlow code from compiling under XLA, before the run."""

__version__ = "0.1.0"

from xlalint.api import assert_xla_compatible, check  # noqa: E402

__all__ = ["__version__", "assert_xla_compatible", "check"]
