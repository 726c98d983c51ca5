"""The prompt executor: render the policy with the event, ask a fast model, read its verdict.

The verdict goes through the same failure policy and merge as a command hook's reply: a model
that cannot be reached, answers too late or answers no verdict is a hook error (fail-open
unless the hook is fail-closed). The reason given to the agent is only ever the model's reason.
"""

from __future__ import annotations

import os
import sys
import time

from .. import transcripts
from ..config.templates import (
    DEFAULT_MAX_EVENT_CHARS,
    TemplateError,
    event_json,
    fence,
    load_template_file,
    new_nonce,
    render,
    resolve_prompt_file,
)
from ..core.engine import STOP_MARGIN, hook_deadline
from ..core.events import STOP_EVENTS, Event
from ..core.hook import Hook
from ..core.result import HookResult
from ..hosts import get as dialect
from ..model.chain import ModelChain
from ..model.endpoint import ModelError, ModelReply, ModelRequest, ModelTimeout, Verdict
from ..model.failures import SETTLE, unjudged
from ..model.recording import request_key
from ..model.verdict import (
    VerdictError,
    cache_verdict,
    cached_verdict,
    parse_verdict,
)
from ..transcripts.conversation import DEFAULT_ENTRIES, Conversation
from .evaluator import system_message


def template_text(hook: Hook) -> str:
    # A template of an approved config comes with its text, as read when it was checked.
    if hook.prompt_file and hook.prompt is None:
        return load_template_file(resolve_prompt_file(hook.prompt_file, hook.config_dir)).text
    return hook.prompt or ""


def transcript_entries(hook: Hook, event: Event) -> int:
    """How many entries of the conversation the prompt holds: the handler's ``transcript``,
    else a default on stop events (they judge the work) and none on others."""
    if hook.transcript is not None:
        return hook.transcript
    return DEFAULT_ENTRIES if event.name in STOP_EVENTS else 0


def prepare(hook: Hook, event: Event,
            models: ModelChain | None = None) -> tuple[ModelRequest, Conversation | None]:
    """The exact request a prompt hook sends for an event, and the conversation read for it
    (None: the hook does not ask for one)."""
    settings = hook.prompt_settings
    budget = (hook.max_event_chars or (settings.max_event_chars if settings else None)
              or DEFAULT_MAX_EVENT_CHARS)
    endpoint = (models or ModelChain()).endpoint(hook)
    entries = transcript_entries(hook, event)
    conversation = None
    # The parsed event, dumped canonically: what the model is asked (and the cassette key, a
    # hash of the request) does not depend on the host's key order or whitespace. With a
    # conversation, the two share the budget: the event at most half of it.
    arguments, _ = event_json(event.raw, budget // 2 if entries else budget)
    if entries:
        # the redaction pass before the reply only for a conversation sent: otherwise the
        # audit loads it, after the reply
        from ..redaction import MAX_CHARS, config_keys, redact

        conversation = transcripts.read(dialect(event.host).transcript, event.raw,
                                        event.name)
        keys = [endpoint.api_key, *config_keys([hook.api_key_env])]
        text = transcripts.render(
            conversation, budget - len(arguments), entries,
            lambda t: redact(t, keys, limit=max(len(t), MAX_CHARS)))
        arguments = f"{arguments}\n\n{text}"
    nonce = new_nonce(arguments)
    user = render(template_text(hook), fence(arguments, nonce))
    messages = ({"role": "system",
                 "content": system_message(event, nonce, conversation is not None)},
                {"role": "user", "content": user})
    return ModelRequest(endpoint=endpoint, messages=messages, nonce=nonce,
                        impossible=event.name in STOP_EVENTS), conversation


def build_request(hook: Hook, event: Event, models: ModelChain | None = None) -> ModelRequest:
    """The exact request a prompt hook sends for an event (also used by dry runs)."""
    return prepare(hook, event, models)[0]


def _debug(hook: Hook, conversation: Conversation | None) -> None:
    """With PROMPTHOOKS_DEBUG=1, one line on stderr: what was read of the transcript."""
    if conversation is None or os.environ.get("PROMPTHOOKS_DEBUG") != "1":
        return
    from ..redaction import redact  # as in prepare

    where = conversation.source or "no file"
    if conversation.unread is not None:
        line = (f"transcript {where}: not read: {conversation.unread}; the hook judges "
                "the event alone")
    else:
        line = f"transcript {where}: {len(conversation.entries)} entries read"
        if conversation.notes:
            line += f" ({'; '.join(conversation.notes)})"
    print(redact(f"prompthooks: hook '{hook.name}': {line}"), file=sys.stderr, flush=True)


def verdict_result(hook: Hook, event: Event, verdict: Verdict, duration: float,
                   reply: ModelReply | None = None, cached: bool = False) -> HookResult:
    """A verdict as a hook result; on a stop event ``impossible`` lets the agent stop."""
    permission = verdict.permission
    system = verdict.system_message
    if event.name in STOP_EVENTS and verdict.impossible and permission == "deny":
        # The condition can never hold: the agent may stop, and the user is told why.
        permission = None
        system = "\n".join(m for m in (
            f"prompthooks: '{hook.name}' lets the agent stop: its condition cannot be met"
            + (f": {verdict.reason}" if verdict.reason else ""), system) if m)
    reason = verdict.reason or ("Blocked by a prompthooks policy." if permission else None)
    halt, stop_reason = verdict.halt, verdict.stop_reason
    if permission == "deny" and event.name in hook.halt_on_block:
        # Its dialect's hosts end the turn on this block unless the handler says otherwise.
        halt, stop_reason = True, stop_reason or reason
    return HookResult(hook=hook, permission=permission, reason=reason,
                      system_message=system, halt=halt,
                      stop_reason=stop_reason, duration=duration,
                      model=reply.model if reply else None,
                      input_tokens=reply.input_tokens if reply else None,
                      output_tokens=reply.output_tokens if reply else None,
                      cost=reply.cost if reply else None,
                      replayed=reply.replayed if reply else False, cached=cached)


def cache_ttl(hook: Hook, event: Event, models: ModelChain | None = None) -> float | None:
    """The verdict cache's TTL for this hook and event: the handler's own, else the file's
    (never for stop events), and none while a cassette is in use or for a managed hook (the
    cache is a file the user, or an agent, can write)."""
    if hook.managed or (models or ModelChain()).cassette_in_use() is not None:
        return None
    if hook.cache_ttl:
        return hook.cache_ttl
    settings = hook.prompt_settings
    if settings and settings.verdict_cache_ttl and event.name not in STOP_EVENTS:
        return settings.verdict_cache_ttl
    return None


class PromptExecutor:
    """Runs the prompt hooks of one run through ``models``. A model call gives up by itself
    within the loop's settle time, so there is nothing left for ``stop`` to do.

    ``run_deadline`` is the run's: a hook's start-up (its client's imports, a warm worker
    starting) may take its deadline past its own timeout, but never past the instant the
    engine stops hooks by."""

    stop_grace = SETTLE

    def __init__(self, models: ModelChain | None = None, run_deadline: float | None = None) -> None:
        self.models = models or ModelChain()
        self.cap = (None if run_deadline is None else
                    hook_deadline(run_deadline, time.monotonic(), SETTLE + STOP_MARGIN))

    def run(self, hook: Hook, event: Event, deadline: float) -> HookResult:
        return run(hook, event, deadline, self.models, self.cap)

    def stop(self) -> None:
        pass


def run(hook: Hook, event: Event, deadline: float, models: ModelChain | None = None,
        cap: float | None = None) -> HookResult:
    """Evaluate one prompt hook; never raises for the model's or the template's faults.
    ``cap``: how far start-up time may move ``deadline`` (see PromptExecutor)."""
    models = models or ModelChain()
    start = time.monotonic()
    request: ModelRequest | None = None
    try:
        request, conversation = prepare(hook, event, models)
        _debug(hook, conversation)
        ttl = cache_ttl(hook, event, models)
        key = request_key(request) if ttl else ""
        hit = cached_verdict(key, ttl, os.environ) if ttl else None
        if hit is not None:
            return verdict_result(hook, event, hit[0], time.monotonic() - start, cached=True)
        reply = models.complete(request, deadline, hook, cap)
        verdict = reply.verdict or parse_verdict(reply.text)
        if ttl:
            cache_verdict(key, verdict, os.environ)
    except ModelTimeout as exc:
        return HookResult(hook=hook, status="timeout", error=str(exc),
                          duration=time.monotonic() - start)
    except ModelError as exc:
        why = unjudged(str(exc), request.endpoint, hook.managed) if request is not None else None
        return HookResult(hook=hook, status="error", error=str(exc), unjudged=why,
                          duration=time.monotonic() - start)
    except (TemplateError, VerdictError) as exc:
        return HookResult(hook=hook, status="error", error=str(exc),
                          duration=time.monotonic() - start)
    return verdict_result(hook, event, verdict, time.monotonic() - start, reply)


__all__ = ["PromptExecutor", "build_request", "prepare", "run", "template_text"]
