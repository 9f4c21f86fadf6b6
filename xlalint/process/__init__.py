"""What the parent and `backend/` share about child processes: how they start, end and hand results over."""
