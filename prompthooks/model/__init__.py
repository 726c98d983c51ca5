"""Model access: which model and endpoint a prompt hook uses, and the call through litellm."""
