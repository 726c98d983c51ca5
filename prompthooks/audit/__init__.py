"""The audit log: one SQLite row per hook per event."""
