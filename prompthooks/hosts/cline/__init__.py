"""Cline: ``wire`` (events in from both its engines, replies out, its hooks run),
``config`` (its hook folder), ``install`` (the glue) and ``transcript`` (its task history),
each reached through ``hosts.HOSTS["cline"]``."""
