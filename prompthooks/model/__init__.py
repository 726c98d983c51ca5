"""Model access: which model and endpoint a prompt hook uses, and how it is called (the
client chain of chain.py: cassette, direct OpenAI-compatible client, warm worker, litellm)."""
