"""What ``install`` sets up above a host's glue: each host's glue by name (from the host
registry), the starter policy and the model it uses."""
