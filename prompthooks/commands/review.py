"""What an approval is asked for, shown before it is given: the hooks a config holds (a table
that fits 80 columns, grouped by file), what changed in its files since the last approval
(a unified diff of their text), the hooks added and removed, and what changed between two
revisions of a policy pack. Text from the files is redacted as ``explain`` redacts it."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.hook import Hook, shown_url
from ..redaction import redact
from . import output

if TYPE_CHECKING:
    from ..config.packs import Pack

Row = tuple[str, ...]  # file, event, matcher, type, on error, name, what
COLUMNS = ("event / matcher", "type / on error", "hook")
# Widths of the three columns (characters): 74 in all with the two spaces between columns,
# 80 when boxed (rules and padding), so a terminal's table folds nothing again.
_WHEN, _KIND, _HOOK = 20, 16, 34
MAX_DIFF_LINES = 400  # of one file's diff: a longer one is cut, saying how much was left out


MAX_PROMPT_LINES = 4  # of a prompt's first line in the table (the diff shows it all)


def _cut(text: str, width: int) -> str:
    text = output.printable(" ".join(text.split()))
    return text if len(text) <= width else text[:width - 3] + "..."


def _whole(text: str, width: int) -> str:
    """``text`` over as many lines of ``width`` as it takes, every character kept (its line
    breaks and controls written as escapes): what runs is never cut short in a review."""
    text = output.printable(text)
    return "\n".join(text[i:i + width] for i in range(0, len(text), width)) or '""'


def _matcher(hook: Hook) -> str:
    if hook.matcher.mode == "all":
        return ""
    return hook.matcher.pattern or "|".join(hook.matcher.names)


def _what(hook: Hook) -> str:
    """The command, the hook file, where an http hook posts, or the prompt's first non-blank
    line (or its file)."""
    if hook.kind == "command":
        return "$ " + (hook.command or hook.executable or "?")
    if hook.kind == "http":
        names = ", ".join(sorted({name for name, _ in hook.headers}))
        return f"POST {shown_url(hook.url or '')}" + (f" (headers {names})" if names else "")
    first = next((ln for ln in (hook.prompt or "").splitlines() if ln.strip()), "")
    return "> " + (first or f"prompt_file {hook.prompt_file}")


def rows(hooks: Iterable[Hook], folder: Path, keys: Sequence[str],
         environ: Mapping[str, str]) -> list[Row]:
    """One row per hook, in the order of its file and place; every text redacted."""
    out: list[Row] = []
    for hook in sorted(hooks, key=lambda h: (h.source.priority, h.index)):
        file = hook.label.split(": ", 1)[0]
        if Path(file).is_relative_to(folder):
            file = str(Path(file).relative_to(folder))
        model = hook.model or (hook.prompt_settings.model if hook.prompt_settings else None)
        kind = f"{hook.kind} {model}" if hook.judged and model else hook.kind
        out.append(tuple(redact(text, keys, environ) for text in (
            file, hook.config_event, _matcher(hook), kind,
            "fail-closed" if hook.fail_closed else "fail-open", hook.name, _what(hook))))
    return out


def _cells(row: Sequence[str]) -> list[str]:
    _, event, matcher, kind, closed, name, what = row
    when = _cut(event, _WHEN) + (f"\n{_whole(matcher, _WHEN)}" if matcher else "")
    if what.startswith(">"):  # a prompt's first line: the diff shows the whole prompt
        shown = _whole(what, _HOOK).split("\n")
        what = "\n".join(shown[:MAX_PROMPT_LINES])
        what = what[:-3] + "..." if len(shown) > MAX_PROMPT_LINES else what
    else:  # a command: all of it
        what = _whole(what, _HOOK)
    hook = _cut(name, _HOOK) + ("" if what == f"$ {name}" else f"\n{what}")
    kind, _, model = kind.partition(" ")
    return [when, "\n".join(_whole(t, _KIND) for t in (kind, model, closed) if t), hook]


def print_hooks(table: Sequence[Sequence[str]]) -> None:
    """The hooks grouped by file, each group a table of at most 80 columns."""
    from rich.markup import escape  # rich only for a table printed: --json never loads it

    files = list(dict.fromkeys(row[0] for row in table))
    for file in files:
        mine = [row for row in table if row[0] == file]
        # A title is read as rich markup: the file's name is escaped, as cells are.
        title = f"{output.printable(file)}: {len(mine)} hook{'s' * (len(mine) != 1)}"
        output.table(COLUMNS, (_cells(row) for row in mine), title=escape(title))


def hook_changes(before: Sequence[Sequence[str]], after: Sequence[Sequence[str]]
                 ) -> list[str]:
    """Lines naming the hooks added, removed and changed: a hook is changed when one hook of
    its file, event and name is gone and one is new (its matcher, type, model, failure
    policy or what it runs differs); the lines of a changed hook say what it was and is."""
    old = [tuple(r) for r in before]
    new = [tuple(r) for r in after]
    removed = [r for r in old if r not in new]
    added = [r for r in new if r not in old]

    def key(row: Sequence[str]) -> tuple[str, ...]:
        return (row[0], row[1], row[5])

    once = [key(r) for r in removed]
    pairs = {key(r): (next(o for o in removed if key(o) == key(r)), r) for r in added
             if once.count(key(r)) == 1 and [key(a) for a in added].count(key(r)) == 1}
    said = [f"- removed {_named(r)}" for r in removed if key(r) not in pairs]
    said += [f"+ added {_named(r)}" for r in added if key(r) not in pairs]
    for (file, event, name), (was, now) in pairs.items():
        said += [f"~ changed {file}: {event}: {name}", f"  - was {_named(was)}",
                 f"  + now {_named(now)}"]
    return said


def style_of(text: str) -> str | None:
    """A review line's colour, from its mark: + green, - red, ~ yellow."""
    return {"+": "green", "-": "red", "~": "yellow"}.get(text.lstrip()[:1])


def _named(row: Sequence[str]) -> str:
    file, event, matcher, kind, closed, name, what = row
    on = f"{event} {matcher}" if matcher else event
    detail = "" if what == f"$ {name}" else f": {what}"
    return f"{file}: {on}: {kind}, {closed}: {name}{detail}"


def file_diff(before: Mapping[str, str | None], after: Mapping[str, bytes | str | None],
              keys: Sequence[str], environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(one line per file added, removed or changed; the unified diff of their text), both
    redacted. A file whose text is not known (binary, or too large to keep) is named only."""
    summary: list[str] = []
    diff: list[str] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), _text(after.get(name))
        if name in before and name in after and old == new and old is not None:
            continue
        state = ("added" if name not in before else "removed" if name not in after
                 else "changed")
        summary.append(f"{name}: {state}")
        if (name in before and old is None) or (name in after and new is None):
            diff.append(f"{name}: {state} (its text is not shown: binary or too large)")
            continue
        a, b = (name, name) if name.startswith("/") else (f"a/{name}", f"b/{name}")
        lines = unified(_lines(old, keys, environ), _lines(new, keys, environ),
                        "/dev/null" if name not in before else a,
                        "/dev/null" if name not in after else b)
        if len(lines) > MAX_DIFF_LINES:
            lines = [*lines[:MAX_DIFF_LINES],
                     f"... {len(lines) - MAX_DIFF_LINES} more lines of {name} not shown"]
        diff += lines
    return summary, diff


def _range(start: int, stop: int) -> str:
    """A hunk's line range as ``diff -u`` writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def unified(a: Sequence[str], b: Sequence[str], a_name: str, b_name: str,
            context: int = 3) -> list[str]:
    """The unified diff of two lists of lines, as ``diff -u`` prints it. The lines the two
    share at their start and end are set aside first: difflib alone treats a line repeated
    all over a long file as noise and then shows the whole file as replaced."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start, cut = max(head - context, 0), max(tail - context, 0)
    a_mid, b_mid = a[start:len(a) - cut], b[start:len(b) - cut]
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, a_mid, b_mid).get_grouped_opcodes(context):
        if not out:
            out += [f"--- {a_name}", f"+++ {b_name}"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1] + start, last[2] + start)} "
                   f"+{_range(first[3] + start, last[4] + start)} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {text}" for text in a_mid[i1:i2]]
                continue
            out += [f"-{text}" for text in a_mid[i1:i2]]
            out += [f"+{text}" for text in b_mid[j1:j2]]
    return out


def _text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value


def _lines(text: str | None, keys: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    if not text:
        return []
    return redact(text, keys, environ, limit=len(text) + 1).splitlines()


def say(text: str, style: str | None = None) -> None:
    """One line of a review, its line breaks written as escapes too: a name or a command
    holding one must not print a line of its own ("+ added ..." forged in a diff)."""
    output.line(output.printable(text), style)


def print_diff(lines: Iterable[str]) -> None:
    for text in lines:
        style = ("bold" if text.startswith(("+++", "---")) else "green" if text[:1] == "+"
                 else "red" if text[:1] == "-" else "cyan" if text.startswith("@@") else None)
        say(text, style)


def as_json(table: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    names = ("file", "event", "matcher", "type", "on_error", "name", "runs")
    return [dict(zip(names, row, strict=True)) for row in table]


def pack_changes(old: Pack, new: Pack, used: Sequence[str] = ()) -> dict[str, list[str]]:
    """What moving from ``old`` to ``new`` (one pack at two revisions) changes: the policies
    added, removed and changed (those in ``used`` marked), the files changed and the unified
    diff of their text (the manifest and the templates a load reads), redacted."""
    said: list[str] = []
    for pid in sorted(set(old.policies) | set(new.policies)):
        before, after = old.policies.get(pid), new.policies.get(pid)
        mark = " (used by this config)" if pid in used else ""
        if before is None:
            said.append(f"+ added policy {pid}{mark}")
        elif after is None:
            said.append(f"- removed policy {pid}{mark}")
        elif before != after or old.texts.get(before.prompt_file) != new.texts.get(
                after.prompt_file):
            said.append(f"~ changed policy {pid}{mark}")
    texts = {name: _text(data) for name, data in old.texts.items()}
    files, diff = file_diff(texts, new.texts, [], os.environ)
    return {"policies": said, "files": files, "diff": diff}


def print_pack_changes(changes: Mapping[str, Sequence[str]]) -> None:
    for text in changes.get("policies", []):
        say(f"  {text}", style_of(text))
    for text in changes.get("files", []):
        say(f"  {text}")
    print_diff(changes.get("diff", []))
