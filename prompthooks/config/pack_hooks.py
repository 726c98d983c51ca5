"""The hooks a config's ``prompthooks.packs`` list stands for (``config.packs`` finds them).

A pack's events and matchers are in Claude Code's vocabulary, whichever style the file using
it is written in: ``PreToolUse`` with a tool-name matcher such as ``Bash|Write``. They serve
every host, as a Claude Code style hook does. Each policy becomes one prompt hook per event,
its template text read (and checked against the fetched pack) at load time.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..core.hook import Hook, MatchOn, PromptSettings, Source, Trigger
from ..core.matchers import Matcher
from ..errors import ConfigError
from . import packs
from .packs import PackError
from .templates import parse_front_matter


class EventKey(Protocol):
    """What an event key of a dialect's config stands for (a host's ``ConfigEvent``)."""

    @property
    def trigger(self) -> Trigger: ...

    @property
    def match_on(self) -> MatchOn: ...


class _DialectWire(Protocol):
    @property
    def CONFIG_EVENTS(self) -> Mapping[str, EventKey]: ...


class _DialectConfig(Protocol):
    def make_matcher(self, pattern: str | None, match_on: MatchOn) -> Matcher: ...


class Dialect(Protocol):
    """What config reading needs of a dialect (a host from the registry, handed down by the
    loader): this module sits below ``hosts/``, so it names no host and imports none."""

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def wire(self) -> _DialectWire: ...

    @property
    def config(self) -> _DialectConfig: ...


PROMPT_TIMEOUT = 30.0  # every dialect's prompt hooks (Claude Code's prompt default)


def _open(use: Any, config_dir: str, source: Source, environ: Mapping[str, str]) -> packs.Pack:
    if use.path is not None:
        return packs.open_folder(Path(config_dir) / Path(use.path).expanduser())
    if source.name == "managed":
        # The cache is the user's to write: a managed policy's templates must not come from it.
        raise PackError("a managed policy cannot use a pack from the user's cache; put the "
                        "pack in a folder the administrator owns and name it with 'path'")
    return packs.open_pinned(packs.normalize(use.repo, config_dir), use.rev, environ)


def pack_hooks(block: Any, path: Path, source: Source, settings: PromptSettings | None,
               first_index: int, environ: Mapping[str, str],
               problems: list[ConfigError], checks: list[dict[str, Any]],
               canonical: Dialect) -> list[Hook]:
    """The hooks of every pack use in a validated ``prompthooks`` block; what is wrong goes
    to ``problems`` (the file then fails as a whole, as for any other bad value), and what
    a cached load must check again to ``checks``. ``canonical`` is the dialect packs are
    written in (the registry's, handed down by the loader)."""
    out: list[Hook] = []
    config_dir = str(path.parent.resolve())
    for pi, use in enumerate(block.packs or []):
        where = f"prompthooks.packs[{pi}]"
        try:
            pack = _open(use, config_dir, source, environ)
        except PackError as exc:
            problems.append(ConfigError(str(path), str(exc), where))
            continue
        try:
            checks.append(packs.check_of(pack, use.rev))
        except PackError as exc:  # changed since it was opened
            problems.append(ConfigError(str(path), str(exc), where))
            continue
        for ui, chosen in enumerate(use.policies):
            at = f"{where}.policies[{ui}]"
            policy = pack.policies.get(chosen.id)
            if policy is None:
                known = ", ".join(sorted(pack.policies))
                problems.append(ConfigError(str(path), f"pack {pack.name} has no policy "
                                            f"{chosen.id!r} (it has: {known})", f"{at}.id"))
                continue
            try:
                # The bytes hashed when the pack was opened, not the file read again.
                raw = pack.texts.get(policy.prompt_file)
                if raw is None:
                    raw = packs.read(pack.root, policy.prompt_file)
                text = raw.decode("utf-8-sig")
                _, body = parse_front_matter(text)
            except (PackError, UnicodeDecodeError) as exc:
                problems.append(ConfigError(str(path), f"pack {pack.name}: {exc}", at))
                continue
            matcher_text = chosen.matcher if chosen.matcher is not None else policy.matcher
            try:
                matcher = canonical.config.make_matcher(matcher_text, "tool")
            except ValueError as exc:
                problems.append(ConfigError(str(path), str(exc), f"{at}.matcher"))
                continue
            origin = f"{pack.name}@{use.rev}" if use.rev else pack.name
            for event_key in chosen.events or policy.events:
                config_event = canonical.wire.CONFIG_EVENTS.get(event_key)
                if config_event is None:
                    problems.append(ConfigError(
                        str(path), f"unknown {canonical.title} event {event_key!r} (a pack's "
                        "events are Claude Code event names)", f"{at}.events"))
                    continue
                out.append(Hook(
                    source=source, dialect=canonical.name, config_event=event_key,
                    index=first_index + len(out), trigger=config_event.trigger,
                    kind="prompt", label=f"{path}: {at} ({chosen.id} from {origin})",
                    matcher=matcher, match_on=config_event.match_on, prompt=body,
                    policy=f"{pack.name}/{chosen.id}",
                    model=chosen.model or policy.model, prompt_settings=settings,
                    fail_closed=(chosen.failClosed if chosen.failClosed is not None
                                 else policy.fail_closed),
                    max_event_chars=chosen.max_event_chars,
                    timeout=chosen.timeout or policy.timeout or PROMPT_TIMEOUT,
                    config_dir=config_dir))
    return out


def fail_closed_events(data: Any, table: Mapping[str, EventKey]
                       ) -> tuple[set[str], bool]:
    """For a broken file: the canonical events of its pack uses marked ``failClosed`` (in the
    use or, unknowable once the pack cannot be read, not at all), and whether one is marked
    without naming its events (then every event). ``table`` is the canonical dialect's
    events (packs are written in it)."""
    events: set[str] = set()
    every = False
    block = data.get("prompthooks") if isinstance(data, Mapping) else None
    uses = block.get("packs") if isinstance(block, Mapping) else None
    for use in uses if isinstance(uses, list) else []:
        chosen = use.get("policies") if isinstance(use, Mapping) else None
        for policy in chosen if isinstance(chosen, list) else []:
            if not (isinstance(policy, Mapping) and policy.get("failClosed") is True):
                continue
            keys = policy.get("events")
            if not isinstance(keys, list) or not keys:
                every = True
                continue
            for key in keys:
                config_event = table.get(key) if isinstance(key, str) else None
                if config_event is None:
                    every = True
                else:
                    events.add(config_event.trigger.event)
    return events, every
