"""The resident dispatcher and the thin ``prompthooks run`` client that hands it events.

``client`` is the console script's entry point and imports the standard library only;
``prompthooks.address`` (a base module) names the sockets; ``protocol`` frames what goes over
them; ``resident`` is the resident process (``prompthooks serve``: the lock, the socket, the
run processes forked ahead, the model process) and ``run_process`` a handed-over run's own
process (:mod:`prompthooks.model.model_process` is the model side).
"""
