"""Cursor: ``wire`` (events in, replies out, its hooks run), ``config`` (its ``hooks.json``
and matchers), ``install`` (the glue) and ``transcript`` (its agent transcript), each reached
through ``hosts.HOSTS["cursor"]``."""
