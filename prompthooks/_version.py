"""The version, in a module of its own: anything may import it without importing the package's
face (and, through it, the API)."""

__version__ = "0.1.0"
