"""The commands: the check command's flags, `xlalint run`, `merge`, `ops`, and what they share."""
