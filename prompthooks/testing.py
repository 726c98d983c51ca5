"""Helpers to test policies inside your own test suite (see docs/testing-policies.md, "In your
own pytest suite"); the pytest plugin's fixtures wrap them. The public face of ``devtools.testing``.

    from prompthooks.testing import event, run, assert_decision
"""

from .devtools.testing import as_config, assert_decision, assert_judged, event, run, unjudged

__all__ = ["as_config", "assert_decision", "assert_judged", "event", "run", "unjudged"]
