"""Claude Code: ``wire`` (events in, replies out, its hooks run), ``config`` (its
``settings.json`` hooks and matchers), ``install`` (the glue) and ``transcript`` (its session
log), each reached through ``hosts.HOSTS["claude"]``."""
