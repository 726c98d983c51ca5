"""What every translation of an event into a hook's own dialect starts from: the canonical
tool input, with the fields each dialect names differently filled in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.events import Event


def canonical_input(event: Event) -> dict[str, Any]:
    """The tool input in Claude Code's words (the canonical vocabulary): a shell command as
    ``command``, a file as ``file_path``, whatever else the host sent kept beside them."""
    given = event.tool_input
    out: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    if event.tool_name == "Bash" and event.command is not None:
        out = {"command": event.command}
    elif "file_path" not in out:
        for key in ("path", "filePath"):
            if isinstance(out.get(key), str):
                out["file_path"] = out[key]
                break
    return out
