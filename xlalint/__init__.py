"""xlalint: find what keeps TensorFlow code from compiling under XLA, before the run."""

__version__ = "0.1.0"
