"""Recording: cassettes of model replies (and http hooks' replies) recorded at our own call
boundary and replayed offline. What a replay miss says about the recordings near it is
:mod:`.replay_miss`'s; reference verdicts (entries written from a test case's expectation) are
:mod:`.references`'; the pytest helpers' record modes are the plugin's
(:mod:`prompthooks.devtools.pytest_plugin`)."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import digests, paths
from ..config import files
from ..core.hook import Hook
from ..errors import excerpt
from .endpoint import ModelError, ModelReply, ModelRequest, ToolCall
from .replay_miss import nearby

# --- Cassettes -----------------------------------------------------------------------------------
# Cassettes: model replies recorded at our own model-call boundary and replayed offline; an
# http hook's replies too (``recorded``/``keep``, keyed by the http executor).
#
# An entry is keyed by a hash of what decides the reply (model, messages, response format,
# temperature, max_tokens), with the per-call fence nonce replaced by a fixed token so the key is
# stable. Nothing volatile (endpoint, key, time) is part of it, and no header or key is ever
# written; the stored prompt and reply pass the redaction pass. The file is YAML, one entry per
# call, sorted by key, with the rendered prompt next to the reply for reviewers. Writes take an
# exclusive lock on the cassette's folder and replace the file atomically, so many hook processes
# can record into one cassette at once and nothing is left beside it; replaying writes nothing.
#
# An entry marked ``source: reference`` is a reference verdict, written from a test case's
# expectation rather than by a model (:class:`.references.ReferenceCassette` writes them); it
# replays like any other and is counted apart in :attr:`Cassette.sources`.
#
# Modes: ``replay`` (never call the model; a missing entry is an error naming the hook and the
# key), ``record`` (always call, write the reply), ``auto`` (replay what exists, record what is
# new), ``rerecord`` (call the model, compare with the recording, write nothing).

Mode = Literal["replay", "record", "auto", "rerecord"]
MODES: tuple[Mode, ...] = ("replay", "record", "auto", "rerecord")
NONCE_TOKEN = "NONCE"
MAX_CASSETTE_BYTES = 64 * 1024 * 1024  # far above a suite's recordings; read whole each replay
HEADER = ("# prompthooks cassette: recorded model replies, one entry per model call.\n"
          "# An entry with 'source: reference' was written from a test case's expectation,\n"
          "# not by a model. Review each prompt with its reply. Re-record with --record.\n")


# How `prompthooks run` picks a model (it has no --model): for a miss under another model.
ENV_MODEL_OPTION = "PROMPTHOOKS_MODEL={model} (a hook's own model wins over it)"


class CassetteError(ModelError):
    """A cassette that cannot be read, or a replay with no recorded reply."""


def request_key(request: ModelRequest) -> str:
    """A stable hash of what decides the model's reply."""
    data = {
        "model": request.endpoint.model,
        "messages": [{"role": m["role"], "content": normalize_nonce(m["content"], request.nonce)}
                     for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "response_format": "json_object" if request.json_mode else None,
    }
    if request.tools or request.turns:
        # An agent hook's turn: the tools offered and every call and result so far decide the
        # reply (only then present, so a prompt hook's key is what it always was).
        data["tools"] = list(request.tools)
        data["turns"] = [_normalized_turn(t, request.nonce) for t in request.turns]
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False).encode()
    return digests.sha256(blob).hexdigest()[:32]


def normalize_nonce(text: str, nonce: str) -> str:
    return text.replace(nonce, NONCE_TOKEN) if nonce else text


def _normalized_turn(turn: Mapping[str, Any], nonce: str) -> dict[str, Any]:
    """A turn with the nonce in its content (a tool result is fenced with it) made fixed."""
    content = turn.get("content")
    return {**turn, "content": normalize_nonce(content, nonce) if isinstance(content, str)
            else content}


def tool_results(request: ModelRequest) -> dict[str, Any]:
    """For reviewers of an agent hook's entry: what the tools answered before this reply
    (already redacted when the request was made); nothing for other requests."""
    if not request.turns:
        return {}
    return {"tool_results": [normalize_nonce(str(t.get("content", "")), request.nonce)
                             for t in request.turns if t.get("role") == "tool"]}


def recorded_calls(entry: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    """The tool calls an entry recorded (an agent hook's turn); none for any other shape."""
    calls = entry.get("tool_calls")
    return tuple(ToolCall(str(c.get("id", "")), str(c.get("name", "")),
                          str(c.get("arguments", "")))
                 for c in (calls if isinstance(calls, list) else ()) if isinstance(c, dict))


def _dumper() -> Any:
    import yaml  # yaml only for a cassette read or written: request_key needs none

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper


@dataclass
class Drift:
    """A verdict that changed when the model was asked again (``rerecord``)."""

    hook: str
    key: str
    recorded: str
    now: str


@dataclass
class Cassette:
    path: Path
    mode: Mode = "replay"
    drift: list[Drift] = field(default_factory=list)
    calls: int = 0  # model calls made
    failed_calls: list[str] = field(default_factory=list)  # "hook: error" per failed call
    unrecorded: list[str] = field(default_factory=list)  # one line per reply not written
    # Where the replies came from: "recording" (a model's reply replayed), "reference" (a
    # verdict written by people, marked ``source: reference``), "model" (asked now).
    sources: dict[str, int] = field(default_factory=dict)
    # What a replay miss tells the user to do: the way to record in the tool they are using.
    hint: str = ("record it with --record, or write the case's expected verdict with "
                 "prompthooks test --write-references")
    # How the tool in use picks a model, for a miss whose prompt is recorded under another.
    model_option: str = "--model {model}"
    _entries: dict[str, dict[str, Any]] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Each entry's YAML text beside the entry it was made from, and the file as this object
    # last wrote it (inode, size, change time): a write dumps only the entries it has not
    # dumped before and re-reads the file only when another writer changed it. Dumping and
    # reading the whole file on every write made recording n replies cost n² entry dumps
    # (PyYAML's dumper is pure Python): minutes for the shipped library.
    _texts: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    _written: tuple[int, int, int] | None = None

    def _read(self) -> dict[str, dict[str, Any]]:
        import yaml  # see _dumper

        try:
            # Never a blocking open: a FIFO named as the cassette would hold the run (and a
            # recording) until its budget.
            raw = files.read_bytes(self.path, MAX_CASSETTE_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        except files.UnsafeFile as exc:
            raise CassetteError(f"cassette {self.path} {exc}") from None
        except OSError as exc:
            raise CassetteError(f"cassette {self.path} cannot be read: "
                                f"{exc.strerror or exc}") from None
        try:
            # libyaml's loader where PyYAML has it: some 20 times faster, and every replaying
            # run reads the whole cassette.
            data = yaml.load(raw.decode("utf-8"),
                             Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (UnicodeDecodeError, yaml.YAMLError) as exc:
            raise CassetteError(f"cassette {self.path} cannot be read: "
                                f"{excerpt(str(exc))}") from None
        entries = data.get("entries") if isinstance(data, dict) else None
        if data is not None and not isinstance(entries, list):
            raise CassetteError(f"cassette {self.path} is not a cassette (no 'entries' list)")
        out = {}
        for entry in entries or []:
            if not (isinstance(entry, dict) and isinstance(entry.get("key"), str)
                    and isinstance(entry.get("reply"), str)):
                raise CassetteError(f"cassette {self.path} has an entry without key or reply")
            out[entry["key"]] = entry
        return out

    def _count(self, source: str) -> None:
        with self._lock:
            self.sources[source] = self.sources.get(source, 0) + 1

    def entries(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._entries is None:
                self._entries = self._read()
            return self._entries

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # The lock is on the folder, which already exists and outlives every replace: the
        # cassette itself is swapped for a new file on each write (a lock on it would hold the
        # old inode), and a lock file of our own would be left behind in the user's tree.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def write(self, entry: Mapping[str, Any]) -> None:
        """Add or replace one entry: under the lock, with what other writers added, replace the
        file atomically. The file is what one ``yaml.dump`` of every entry, sorted by key,
        would write; only the new entry is dumped."""
        if self.path.suffix not in (".yaml", ".yml"):
            # A case file names its cassette: whoever wrote it must not get a recording (their
            # own prompt text included) written over a shell profile or another tool's file.
            raise CassetteError(f"cassette {self.path}: not written (a cassette is a .yaml or "
                                ".yml file)")
        with self._lock, self._locked():
            entries = self._current()
            entries[entry["key"]] = dict(entry)
            dumper = _dumper()
            body = "".join(self._text(entries[k], dumper) for k in sorted(entries))
            data = (HEADER + "version: 1\nentries:\n" + body).encode("utf-8")
            paths.atomic_write(self.path, data, durable=True)
            self._entries = entries
            self._written = _signature(self.path)

    def _current(self) -> dict[str, dict[str, Any]]:
        """The entries on disk now (the lock held): this object's own when the file is still
        the one it wrote last, else read again."""
        if (self._entries is not None and self._written is not None
                and _signature(self.path) == self._written):
            return dict(self._entries)
        return self._read()

    def _text(self, entry: dict[str, Any], dumper: Any) -> str:
        """One entry as the whole file's dump holds it (an item of its ``entries`` list)."""
        import yaml  # see _dumper

        kept = self._texts.get(entry["key"])
        if kept is not None and kept[0] == entry:
            return kept[1]
        text: str = yaml.dump([entry], Dumper=dumper, sort_keys=False, allow_unicode=True,
                              width=100)
        self._texts[entry["key"]] = (entry, text)
        return text

    def complete(self, request: ModelRequest, deadline: float, hook: Hook,
                 call_model: Callable[[ModelRequest, float], ModelReply]) -> ModelReply:
        """The recorded reply, or ``call_model``'s (by the mode; the chain passes the model
        itself, as ``Models.ask`` reaches it)."""
        key = request_key(request)
        try:
            recorded = None if self.mode == "record" else self.entries().get(key)
        except CassetteError:
            if self.mode != "auto":
                raise
            # auto records what is missing: an unreadable cassette holds nothing to replay,
            # and the model is asked; its write then fails, said in one line (_unrecorded)
            recorded = None
        if recorded is not None and self.mode in ("replay", "auto"):
            self._count("reference" if is_reference(recorded) else "recording")
            return ModelReply(text=recorded["reply"], model=str(recorded.get("model", "")),
                              input_tokens=recorded.get("input_tokens"),
                              output_tokens=recorded.get("output_tokens"), replayed=True,
                              tool_calls=recorded_calls(recorded))
        if self.mode == "replay":
            user = next((m["content"] for m in request.messages if m["role"] == "user"), "")
            try:
                near = nearby(self.entries(), normalize_nonce(user, request.nonce), request,
                              self.model_option)
            except Exception:  # a cassette of any shape: the miss is said, with less detail
                near = ""
            raise CassetteError(f"no recorded reply for hook '{hook.name}' ({hook.label}) in "
                                f"cassette {self.path} (key {key}){near}; {self.hint}")
        try:
            reply = call_model(request, deadline)
        except ModelError as exc:
            with self._lock:
                self.calls += 1
                self.failed_calls.append(f"{hook.name}: {excerpt(str(exc))}")
            raise
        with self._lock:
            self.calls += 1
        self._count("model")
        if self.mode == "rerecord":
            if recorded is not None and recorded["reply"] != reply.text:
                self.drift.append(Drift(hook.name, key, recorded["reply"], reply.text))
            return reply
        user = next((m["content"] for m in request.messages if m["role"] == "user"), "")
        from ..redaction import redact  # its patterns: only for an entry written

        # What is stored passes the redaction pass (the key stays computed from the real
        # request): a cassette is committed to a repository and read by people.
        hidden = [request.endpoint.api_key]
        entry: dict[str, Any] = {
            "key": key, "hook": hook.name, "model": request.endpoint.model,
            "prompt": redact(normalize_nonce(user, request.nonce), hidden),
            "reply": redact(reply.text, hidden),
            "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        entry.update(tool_results(request))
        if reply.tool_calls:
            # Kept as the model wrote them (they are paths and patterns, redacted like the
            # reply): a replay sends them to the same tools, whose results key the next turn.
            entry["tool_calls"] = [{"id": c.id, "name": c.name,
                                    "arguments": redact(c.arguments, hidden)}
                                   for c in reply.tool_calls]
        try:
            self.write(entry)
        except Exception as exc:  # recording never changes a verdict: the reply stands
            self._unrecorded(hook, exc)
        return reply

    def recorded(self, key: str, hook: Hook) -> dict[str, Any] | None:
        """For an exchange that is not a model call (an http hook's, keyed by its caller): the
        entry to replay, or None when the exchange is to be made now. A replay that finds
        none raises CassetteError naming the hook and the key."""
        try:
            entry = None if self.mode in ("record", "rerecord") else self.entries().get(key)
        except CassetteError:
            if self.mode != "auto":
                raise
            entry = None
        if entry is not None:
            self._count("recording")
            return entry
        if self.mode == "replay":
            raise CassetteError(f"no recorded reply for hook '{hook.name}' ({hook.label}) in "
                                f"cassette {self.path} (key {key}); {self.hint}")
        return None

    def keep(self, hook: Hook, entry: Mapping[str, Any]) -> None:
        """Record an exchange made now (``recorded`` returned None for its key): written, or
        under ``rerecord`` compared with what is recorded. Never raises: a reply not written
        is said in one line."""
        with self._lock:
            self.calls += 1
        self._count("model")
        if self.mode == "rerecord":
            try:
                before = self.entries().get(entry["key"])
            except CassetteError:
                before = None
            if before is not None and before["reply"] != entry["reply"]:
                self.drift.append(Drift(hook.name, entry["key"], before["reply"],
                                        entry["reply"]))
            return
        try:
            self.write({**entry,
                        "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        except Exception as exc:  # recording never changes a verdict: the reply stands
            self._unrecorded(hook, exc)

    def _unrecorded(self, hook: Hook, exc: Exception) -> None:
        """One line on stderr for a reply that could not be recorded, kept in
        :attr:`unrecorded` too."""
        from ..redaction import redact  # its patterns: only for a reply not recorded

        if isinstance(exc, CassetteError):
            why = str(exc)
        elif isinstance(exc, FileExistsError) and exc.filename:  # its folder is a file
            why = f"cassette {self.path}: {exc.filename} is a file, not a folder"
        elif isinstance(exc, OSError):
            where = exc.filename or self.path
            why = f"cassette {self.path}: {where}: {exc.strerror or exc}"
        else:
            why = f"cassette {self.path}: {type(exc).__name__}: {excerpt(str(exc))}"
        what = "the model's reply" if hook.kind == "prompt" else "its reply"
        line = f"hook '{hook.name}': {what} was not recorded ({why}); its verdict stands"
        with self._lock:
            self.unrecorded.append(line)
        print(redact(f"prompthooks: {line}"), file=sys.stderr, flush=True)


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What tells one version of a cassette file from another: every write replaces the file
    (a new inode), and its size and change time go with it."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_ctime_ns


def is_reference(entry: Mapping[str, Any]) -> bool:
    """Whether an entry is a reference verdict written by people, not a model's reply."""
    return str(entry.get("source", "")).startswith("reference")


def sources_line(sources: Mapping[str, int]) -> str:
    """Where the verdicts came from, so reference verdicts are never taken for a model's."""
    parts = [f"{sources.get('recording', 0)} from model recordings",
             f"{sources.get('reference', 0)} from reference verdicts (not a model's output)"]
    if sources.get("model"):
        parts.append(f"{sources['model']} from the model now")
    return "verdicts: " + ", ".join(parts)


_from_env: dict[tuple[str, str], Cassette] = {}


def from_environment(environ: Mapping[str, str]) -> Cassette | None:
    """The cassette ``PROMPTHOOKS_CASSETTE`` and ``_MODE`` name, if any (one object per path
    and mode in a process, so its counts add up across runs)."""
    path = environ.get("PROMPTHOOKS_CASSETTE")
    if not path:
        return None
    mode = environ.get("PROMPTHOOKS_CASSETTE_MODE") or "replay"
    if mode not in MODES:
        raise CassetteError(f"PROMPTHOOKS_CASSETTE_MODE must be one of {', '.join(MODES)}, "
                            f"not {mode!r}")
    cassette = _from_env.get((path, mode))
    if cassette is None:
        cassette = _from_env[(path, mode)] = Cassette(
            Path(path), mode, model_option=ENV_MODEL_OPTION)
    return cassette
