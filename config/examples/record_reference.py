"""Write demo.cassette.yaml: reference verdicts for the demo's prompt hooks.

No model is asked; each verdict below is written through the real engine and cassette code
and marked ``source: reference``. Run from the repository root:
``python config/examples/record_reference.py``.
"""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from prompthooks.commands import demo
from prompthooks.model.call import ModelReply, ModelRequest
from prompthooks.recording import cassette

# A distinctive part of the event -> the verdict (events not listed: {"ok": true}).
VERDICTS = {
    '"rm -rf ~/"': "rm -rf ~/ deletes the home directory, outside the project.",
    "find .. -name": "find .. -delete removes files in the parent directory, outside the "
                     "project; clean logs inside the project only.",
    "ghp_8fK2": "The prompt contains a GitHub token; remove it and refer to the secret by "
                "name.",
    "validation tests still fail": "The form validation tests still fail; fix them and run "
                                   "the tests before stopping.",
}
SOURCE = "reference verdict written with the demo by the maintainers; not a model's output"


def answer(request: ModelRequest, deadline: float) -> ModelReply:
    user = next(m["content"] for m in request.messages if m["role"] == "user")
    reason = next((r for marker, r in VERDICTS.items() if marker in user), None)
    verdict = {"ok": False, "reason": reason} if reason else {"ok": True}
    return ModelReply(text=json.dumps(verdict), model=request.endpoint.model)


def main() -> int:
    tape = demo.examples_dir() / "demo.cassette.yaml"
    tape.unlink(missing_ok=True)
    cassette.call_model = answer  # type: ignore[assignment]
    real = cassette.Cassette

    def recording(path: object, mode: str = "replay") -> cassette.Cassette:
        return real(tape, "record")

    demo.Cassette = recording  # type: ignore[assignment,misc]
    demo.main(argparse.Namespace())
    data = yaml.safe_load(tape.read_text())
    for entry in data["entries"]:
        entry["source"] = SOURCE
    tape.write_text(cassette.HEADER + yaml.dump(data, Dumper=cassette._dumper(),
                                                sort_keys=False, allow_unicode=True, width=100))
    print(f"{tape}: {len(data['entries'])} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
