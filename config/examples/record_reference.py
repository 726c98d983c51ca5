"""Write demo.cassette.yaml: reference verdicts for the demo's prompt hooks.

No model is asked. The demo's events run through the real engine with a reference cassette
(the one writer of reference entries, as ``prompthooks test --write-references`` uses): each
prompt hook's entry is keyed as its real request, holds the verdict below, and says
``source: reference`` with a note. Run from the repository root:
``python config/examples/record_reference.py``.
"""

from __future__ import annotations

import sys

from prompthooks.commands import demo
from prompthooks.core.hook import Hook
from prompthooks.model.chain import ModelChain
from prompthooks.model.endpoint import ModelRequest
from prompthooks.model.references import Reference, ReferenceCassette, verdict_text

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
NOTE = "reference verdict written with the demo by the maintainers; not a model's output"


def answer(request: ModelRequest, hook: Hook) -> Reference:
    user = next(m["content"] for m in request.messages if m["role"] == "user")
    reason = next((r for marker, r in VERDICTS.items() if marker in user), None)
    return Reference(verdict_text("deny" if reason else None, reason), NOTE)


def main() -> int:
    folder = demo.examples_dir()
    tape = folder / "demo.cassette.yaml"
    tape.unlink(missing_ok=True)
    writer = ReferenceCassette(tape, answer=answer)
    demo._run(folder, ModelChain(cassette=writer))
    print(f"{tape}: {sum(t.written for t in writer.take())} reference verdicts written",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
