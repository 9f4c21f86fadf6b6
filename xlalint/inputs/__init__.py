"""What xlalint reads: files, notebooks as modules, where a module's file is."""
