"""The resident dispatcher and the thin ``prompthooks run`` client that hands it events.

``client`` is the console script's entry point and imports the standard library only;
``address`` names the per-user socket; ``protocol`` frames what goes over it; ``server`` is the
run side of the resident process (``prompthooks serve``, :mod:`prompthooks.model.worker`).
"""
