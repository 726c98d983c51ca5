#!/usr/bin/env python3
"""A minimal policy service for http hooks (config/examples/http-hook.json): it blocks Bash
commands that delete from the root or the home folder, and has no opinion on anything else.

Run it with ``python3 config/examples/policy_service.py [PORT]`` (default 8700; it listens on
127.0.0.1 only). Each request is one event as a command hook would read it on stdin; the reply
is what such a hook would print. Set POLICY_TOKEN to make it check the Authorization header.
"""

from __future__ import annotations

import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1024 * 1024
# `rm -rf /`, `rm -fr ~`, `rm -r -f /*`, ... : a recursive rm of / or ~ (or all in them).
DESTRUCTIVE = re.compile(r"\brm\s+(-\w+\s+)*-\w*[rR]\w*\s+(-\w+\s+)*(/|~)(\*)?(\s|$|;|&)")
TOKEN = os.environ.get("POLICY_TOKEN")


def verdict(event: dict[str, object]) -> dict[str, object]:
    """The reply for one Claude Code style event ({} is no opinion)."""
    tool_input = event.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if event.get("tool_name") == "Bash" and isinstance(command, str) \
            and DESTRUCTIVE.search(command):
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "the policy service blocks recursive deletes of / "
                                        "and ~"}}
    return {}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if TOKEN and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._send(401, {"error": "bad token"})
            return
        size = int(self.headers.get("Content-Length") or 0)
        if not 0 <= size <= MAX_BODY:
            self._send(413, {"error": "too large"})
            return
        try:
            event = json.loads(self.rfile.read(size))
        except ValueError:
            self._send(400, {"error": "not JSON"})
            return
        self._send(200, verdict(event) if isinstance(event, dict) else {})

    def do_HEAD(self) -> None:  # what `prompthooks doctor` asks
        self.send_response(200)
        self.end_headers()

    def _send(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8700
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    # Said once listening: whoever waits for this line can connect at once.
    print(f"policy service on http://127.0.0.1:{port}/check", flush=True)
    server.serve_forever()
