"""Wiring prompthooks into a host's own config, and taking it out again."""
