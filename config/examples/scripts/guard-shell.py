#!/usr/bin/env python3
"""Block dangerous shell commands for any host: deleting / or ~, force pushes, curl | sh.

It reads the raw event from stdin and finds the command wherever the host puts it
(Claude Code and Cursor preToolUse: tool_input.command; Cursor beforeShellExecution: command;
Cline: preToolUse.parameters.command). Exit 2 with a reason on stderr blocks.
"""

import json
import re
import sys

RULES = [
    (r"\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(/|~|\$HOME)/?(\s|$)",
     "Deleting the root or home directory is blocked."),
    (r"\bgit\s+push\b.*(\s--force\b|\s-f\b)",
     "Force pushes rewrite shared history; push a new commit instead."),
    (r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b",
     "Piping a download into a shell is blocked; download it, read it, then run it."),
]
PATHS = (("tool_input", "command"), ("command",), ("preToolUse", "parameters", "command"))


def shell_command(event: dict) -> str:
    for path in PATHS:
        value = event
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str):
            return value
    return ""


command = shell_command(json.load(sys.stdin))
for pattern, reason in RULES:
    if re.search(pattern, command):
        print(f"{reason} ({command})", file=sys.stderr)
        sys.exit(2)
