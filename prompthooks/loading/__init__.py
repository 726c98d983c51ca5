"""Loading the config sources into hooks: the loader that reads each file in its dialect (from
the host registry), the config cache, the managed policy's own load, trust (approvals and what
they cover), the checks behind ``validate`` and the files that look like config but are not
read. Above ``hosts/``; ``config/`` below it holds what a host's reader uses."""
