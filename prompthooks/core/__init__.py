"""The pure domain: events, hooks, matchers, results, the merge and the engine. Nothing here
imports a host, an executor, the config loader or the model: the engine is handed those."""
