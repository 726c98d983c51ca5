"""The resident dispatcher and the thin ``prompthooks run`` client that hands it events.

``client`` is the console script's entry point and imports the standard library only;
``prompthooks.address`` (below the runner, which reads it too) names the per-user socket;
``protocol`` frames what goes over it; ``resident`` is the resident process's serving loop
(``prompthooks serve``) and ``server`` its run side (:mod:`prompthooks.model.worker` is its
model side).
"""
