"""The parent's side of `xlalint run`: the run's child, its scratch tree, its report."""
