"""What install and uninstall print: one line per action as it happens, or (``--json``) one
object at the end; under ``--dry-run`` the same lines in the conditional ("would write")."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from ..install.files import Journal
from . import output

# The first words of the action lines, and how a dry run says them.
_WOULD = (("wrote ", "would write "), ("backed up ", "would back up "),
          ("removed ", "would remove "), ("restored ", "would restore "),
          ("approved ", "would approve "), ("kept ", "would keep "))


@dataclass
class Report:
    as_json: bool
    dry_run: bool
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        if self.dry_run:
            for done, would in _WOULD:
                if text.startswith(done):
                    text = would + text[len(done):]
                    break
        self.messages.append(text)
        if not self.as_json:
            print(text, flush=True)

    def warn(self, text: str) -> None:
        """A line on stderr, whatever the format: a warning must not be lost in a pipe."""
        self.warnings.append(text)
        print(f"prompthooks: {text}", file=sys.stderr, flush=True)

    def finish(self, journal: Journal, last: str, **fields: Any) -> None:
        """The closing line (or, with ``--json``, the whole summary)."""
        if self.as_json:
            output.print_json({**fields, "dry_run": self.dry_run,
                               "changed": bool(journal.changes) and not self.dry_run,
                               "changes": [c.as_dict() for c in journal.changes],
                               "messages": self.messages, "warnings": self.warnings})
            return
        print("dry run: nothing was changed" if self.dry_run else last, flush=True)
