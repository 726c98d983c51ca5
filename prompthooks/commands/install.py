"""``prompthooks install --host HOST``: write the glue that makes the host call
``prompthooks run`` into the host's own config, and a starter prompthooks config where the
scope has none. Every check (events, JSON, foreign files) comes before the first write.

A project's host config is committed, so its glue names nothing of this machine's: it runs the
project launcher (``install.launcher``), which finds prompthooks at run time on whichever
machine the host runs, or the bare ``prompthooks run`` with ``--glue bare``.

``--scope managed`` writes into the host's own managed config (Claude Code's managed settings,
Cursor's enterprise hooks file), which no project or user config can remove, names this
installation by absolute path (a PATH the user controls cannot swap in another program), and
leaves the files readable by every user and writable by their owner only. ``--scope local``
is Claude Code's uncommitted personal layer of the project (``.claude/settings.local.json``).

``--dry-run`` says what would change and writes nothing; ``--json`` prints what changed as
one object. The folders install creates are remembered, so uninstall can remove them once
they are empty.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import load_config
from ..devtools.doctor import probe
from ..errors import EXIT_OK, EXIT_USAGE, PromptHooksError
from ..install import created_folders, files, launcher
from ..install.files import Journal
from ..install.glue import Glue, HostGlue, choose, choose_events, current_glue, with_session_start
from ..loading.loader import CONFIG_FILE
from ..model.endpoint import endpoint_for
from ..model.failures import unjudged
from ..redaction import redact
from ..setup import registry, starter
from . import output

# The first words of the action lines, and how a dry run says them.
_WOULD = (("wrote ", "would write "), ("backed up ", "would back up "),
          ("removed ", "would remove "), ("restored ", "would restore "),
          ("approved ", "would approve "), ("kept ", "would keep "))


@dataclass
class Report:
    """What install and uninstall print: one line per action as it happens, or (``--json``)
    one object at the end; under ``--dry-run`` the same lines in the conditional ("would
    write")."""

    as_json: bool
    dry_run: bool
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        if self.dry_run:
            for done, would in _WOULD:
                if text.startswith(done):
                    text = would + text[len(done):]
                    break
        self.messages.append(text)
        if not self.as_json:
            print(text, flush=True)

    def warn(self, text: str) -> None:
        """A line on stderr, whatever the format: a warning must not be lost in a pipe."""
        self.warnings.append(text)
        print(f"prompthooks: {text}", file=sys.stderr, flush=True)

    def finish(self, journal: Journal, last: str, **fields: Any) -> None:
        """The closing line (or, with ``--json``, the whole summary)."""
        if self.as_json:
            output.print_json({**fields, "dry_run": self.dry_run,
                               "changed": bool(journal.changes) and not self.dry_run,
                               "changes": [c.as_dict() for c in journal.changes],
                               "messages": self.messages, "warnings": self.warnings})
            return
        print("dry run: nothing was changed" if self.dry_run else last, flush=True)


def managed_root(args: argparse.Namespace) -> Path:
    given = getattr(args, "managed_root", None)
    return Path(given) if given else registry.ROOT


def _readable_by_all(path: Path) -> None:
    """A managed file every user's host can read and only its owner can change."""
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(path.stat().st_mode)
        os.chmod(path, (mode | 0o444) & ~0o022)
        folder = stat.S_IMODE(path.parent.stat().st_mode)
        os.chmod(path.parent, (folder | 0o555) & ~0o022)


def _unignored(path: Path, project: Path) -> bool:
    """Whether git would commit ``path``: the project is a git work tree that does not ignore
    it. Claude Code adds its own settings.local.json to git's ignores only when it creates the
    file itself. False when git cannot tell (no git, no repository)."""
    git = shutil.which("git")
    if git is None:
        return False
    try:
        inside = subprocess.run([git, "-C", str(project), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=10)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return False
        ignored = subprocess.run([git, "-C", str(project), "check-ignore", "-q", "--",
                                  str(path)], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return ignored.returncode == 1  # 0: ignored; 128: git could not tell


def _glue(host: HostGlue, scope: str, choice: str) -> Glue:
    """The glue for this scope: the absolute path in a managed file (a PATH the user controls
    must not choose what the gate runs), nothing of this machine's in a project's file (it
    is committed and shared), this installation as ``choose`` finds it in one user's file."""
    if scope == "managed":
        if choice in ("bare", "launcher"):
            raise PromptHooksError(f"--glue {choice}: the managed glue always names this "
                                   "installation by absolute path (a PATH the user controls "
                                   "must not choose what the gate runs)", EXIT_USAGE)
        return choose(None, sys.executable, sys.argv[0], "absolute")
    if scope != "project":
        if choice == "launcher":
            raise PromptHooksError("--glue launcher: only a project's glue, which the team "
                                   f"commits, needs a launcher; --scope {scope} names this "
                                   "installation (--glue auto)", EXIT_USAGE)
        return current_glue("bare" if choice == "bare" else
                            "absolute" if choice == "absolute" else "auto")
    if choice == "absolute":
        local = "--scope local (uncommitted) or " if host.local is not None else ""
        raise PromptHooksError("--glue absolute: a project's host config is committed, and "
                               "this machine's path is wrong on every other; use "
                               f"{local}--scope user for glue naming this installation",
                               EXIT_USAGE)
    if choice == "bare":
        bare = current_glue("bare")
        return Glue(bare.command, note="glue: 'prompthooks run' (--glue bare): the host runs "
                    "whatever prompthooks its PATH finds, and lets actions through when it "
                    "finds none", warning=bare.warning)
    return Glue(host.launcher_glue, portable=True,
                note=f"glue: {host.launcher_note} finds prompthooks on each machine at run "
                     "time (PATH, ~/.local/bin, the project's .venv) and blocks when there is "
                     "none; it names nothing of this machine's, so commit it "
                     "(--glue bare writes 'prompthooks run')")


def main(args: argparse.Namespace) -> int:
    host = registry.HOSTS[args.host]
    events = choose_events(host, args.events)
    if getattr(args, "warm_start", False):
        events = with_session_start(host, events)
    project = registry.project_dir(args.scope, args.project)
    root = managed_root(args)
    place = registry.location(host, args.scope, project, root)
    managed = args.scope == "managed"
    glue = _glue(host, args.scope, args.glue)
    runner = project / host.launcher if glue.portable and host.launcher else None
    report = Report(args.json, args.dry_run)
    if glue.warning:
        report.warn(glue.warning)
    folder = starter.folder(args.scope, project, root)
    config = folder / CONFIG_FILE
    # The managed starter is the administrator's to pin (model, api_base, api_key_env): the
    # user's variables and stored keys never reach a managed hook, so they choose nothing.
    choice = None if managed else starter.find_model(os.environ)
    with files.journal(args.dry_run) as journal:
        try:
            if runner is not None:
                launcher.check(runner)
            host.install(place, events, glue, args.force, report.say)
            if runner is not None:
                launcher.write(runner, launcher.text(len(Path(str(host.launcher)).parts) - 1),
                               report.say)
            if glue.note:  # after the checks: a refused install says only why
                report.say(glue.note)
            has_starter = starter.write(folder, report.say, args.scope,
                                        starter.model_settings(choice))
        finally:  # a failure halfway leaves folders that uninstall should still know
            if not args.dry_run:
                created_folders.remember(journal.created_folders(), os.environ)
    if args.scope == "local" and _unignored(place, project):
        report.warn(f"warning: git does not ignore {place}: add "
                    f"{place.relative_to(project)} to .gitignore to keep it yours")
    if managed and not args.dry_run:
        for path in (place, config):
            if path.is_file():
                _readable_by_all(path)
        if has_starter:  # written as the folder's owner: events need not validate it
            starter.compile_managed(folder, report.say)
    last = (f"next: prompthooks validate --config {shlex.quote(str(folder))} checks your "
            "hooks; prompthooks explain shows what an event would run")
    model: dict[str, object] = {}
    if not managed:
        model = _model(report, choice, folder, project, has_starter,
                       not (args.dry_run or args.offline))
        if not model["judges"]:
            fix = str(model["next"])
            last = f"next: {fix}" + ("" if fix == _DOCTOR else f", then {_DOCTOR}")
    report.finish(journal, last, host=host.name, scope=args.scope, location=str(place),
                  events=events, glue=glue.command, config=str(folder), model=model or None)
    return EXIT_OK


_DOCTOR = "prompthooks doctor"


def _model(report: Report, choice: starter.ModelChoice | None, folder: Path, project: Path,
           has_starter: bool, try_it: bool) -> dict[str, object]:
    """Say which model the starter's prompt hook uses and whether it answered (one tiny real
    call unless ``try_it`` is off), or, in plain words, that prompt hooks cannot judge yet and
    what to run: install must never leave a gate that looks on while it is off. A config of
    the user's kept in place of the starter is ``doctor``'s to try."""
    hook = (f"the {starter.POLICY} prompt hook" if has_starter
            else "a prompt hook on the default model")
    off = (f"until then {hook} cannot judge: it lets every command through, and a fail-closed "
           "prompt hook would block them all")
    if choice is None:
        report.say("no model found for prompt hooks: no ANTHROPIC_API_KEY, OPENAI_API_KEY or "
                   "GEMINI_API_KEY, no stored key, no PROMPTHOOKS_API_BASE, no LiteLLM Proxy, "
                   "no Ollama answering")
        report.say(off)
        return {"model": None, "found_by": None, "judges": False,
                "next": f"{starter.MODEL_NEXT} (or start Ollama, or set PROMPTHOOKS_API_BASE: "
                        "see docs/prompt-hooks.md, \"Pointing it at a model\")"}
    shown = f"model: {choice.shown} ({choice.why})"
    facts: dict[str, object] = {"model": choice.model, "found_by": choice.why}
    if not has_starter:
        return {**facts, "judges": True, "tried": False}
    if not try_it:
        report.say(f"{shown}; not tried")
        return {**facts, "judges": True, "tried": False}
    hooks = [h for h in load_config([str(folder)], str(project), keep_managed=False,
                                     trusted_only=False).hooks if h.judged]
    if not hooks:
        return {**facts, "judges": True, "tried": False}
    ok, detail = probe(hooks[0])
    if ok:
        report.say(f"{shown}: {detail}; prompt hooks judge from now on")
        return {**facts, "judges": True, "tried": True}
    why = unjudged(detail, endpoint_for(hooks[0]))
    report.say(f"{shown} did not answer: {why or redact(detail)}")
    report.say(off.replace("until then", "until it does"))
    fix = why.rsplit("(run: ", 1)[1].rstrip(")") if why and "(run: " in why else _DOCTOR
    return {**facts, "judges": False, "tried": True, "next": fix}
