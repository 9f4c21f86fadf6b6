"""The check command: which files are read and traced, each file's findings, selection, coverage."""
