"""`xlalint doctor`'s probes (TensorFlow), each run in a child process."""
