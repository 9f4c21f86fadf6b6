"""The records every stage shares: results, the wire format, the op graph, specs, support tables."""
