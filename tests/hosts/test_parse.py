"""Input no host could have sent: one clear error, never a traceback."""

from __future__ import annotations

import json

import pytest

from prompthooks.api import parse_event
from prompthooks.errors import InputError

from ..helpers import claude_event, cline_event, cursor_event


@pytest.mark.parametrize(("data", "message"), [
    (b"", "no event on stdin"),
    (b"   \n", "no event on stdin"),
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'"text"', "must be a JSON object"),
    (b"\xff\xfe\x00", "not valid JSON"),
    (b'{"foo": 1}', "cannot tell which host"),
    (json.dumps(claude_event("Bogus")).encode(), "unknown Claude Code event 'Bogus'"),
    (json.dumps(cursor_event("bogusEvent")).encode(), "unknown Cursor event"),
    (json.dumps(cline_event("Bogus")).encode(), "unknown Cline event"),
])
def test_bad_input_is_one_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_event(data, environ={})
