"""The fault matrix, one file per fault family (see rows.py)."""
