"""The child's side of `xlalint run` (TensorFlow): the script run as __main__, each compiled function captured."""
