"""``xlalint server``: the language server editors talk to (LSP over stdio, on pygls); see docs/editors.md."""
