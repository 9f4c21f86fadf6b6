"""The parent's side of the tracing servers, what they preload, and the per-file result cache."""
