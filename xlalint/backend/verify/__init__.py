"""`--verify` (TensorFlow): each entry compiled and run with and without XLA, and its peak memory."""
