"""What CI systems run around xlalint (the GitHub Action's step)."""
