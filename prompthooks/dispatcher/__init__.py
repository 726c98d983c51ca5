"""The resident dispatcher and the thin ``prompthooks run`` client that hands it events.

``client`` is the console script's entry point and imports the standard library only;
``prompthooks.address`` (below the runner, which reads it too) names the per-user socket;
``protocol`` frames what goes over it; ``resident`` is the resident process's serving loop
(``prompthooks serve``) with its model side (the answer to a prompt hook's call from
:mod:`prompthooks.model.chain`), and ``server`` its run side.
"""
