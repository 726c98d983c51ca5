"""Recording and replaying model replies (cassettes)."""
