"""Model access: which model and endpoint a prompt hook uses, and the call through litellm."""

# Set by `prompthooks run`: a missing warm worker is then started in the background. Library
# callers never get a background process. (Here, not in .worker, so that setting it is free.)
autostart = False
