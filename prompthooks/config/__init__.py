"""Config below the hosts: discovery, bounded file reads, the shared schema and handler
reading, policy packs, and what a load produces; each host's config reader builds on these."""
