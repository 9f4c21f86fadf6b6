"""The only part of xlalint that imports TensorFlow.

Everything here runs in a child process (see ``xlalint.tracing.workers``): the
user's module is imported, its entry points are traced, and each traced graph
leaves as plain JSON. Nothing outside this package imports TensorFlow.
"""
