"""Every run setting, written once, and `[tool.xlalint]`."""
