"""xlalint's version, in a module of its own so that any module can read it without importing the package."""

VERSION = "0.1.0"
