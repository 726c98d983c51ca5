"""Each host's modules hold their roles: the registry imports them by name on first use, so
the type checker sees them here, against their protocols, and these tests check the same at
run time; and reading an event loads the wire of the host that sent it, no other host's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from prompthooks import hosts
from prompthooks.hosts import protocol
from prompthooks.hosts.claude import config as claude_config
from prompthooks.hosts.claude import wire as claude_wire
from prompthooks.hosts.cline import config as cline_config
from prompthooks.hosts.cline import wire as cline_wire
from prompthooks.hosts.cursor import config as cursor_config
from prompthooks.hosts.cursor import wire as cursor_wire
from prompthooks.install.glue import HostGlue
from prompthooks.transcripts.reading import TranscriptReader

from ..helpers import claude_bash, cline_event, cursor_event

WIRES: tuple[protocol.Wire, ...] = (claude_wire, cursor_wire, cline_wire)
DIALECTS: tuple[protocol.Dialect, ...] = (claude_config, cursor_config, cline_config)
FOLDER: protocol.FolderDialect = cline_config
CANONICAL: protocol.HostRoles = hosts.CANONICAL


def _members(role: type) -> set[str]:
    return {name for klass in role.__mro__ if klass is not object
            for name in (*getattr(klass, "__annotations__", {}), *vars(klass))
            if not name.startswith("_")}


@pytest.mark.parametrize("name", hosts.NAMES)
def test_each_hosts_modules_hold_their_roles(name: str) -> None:
    host = hosts.get(name)
    wire, config = host.wire, host.config
    assert isinstance(wire, ModuleType) and wire.__name__.endswith(f".{name}.wire")
    assert _members(protocol.Wire) - set(vars(wire)) == set()
    assert _members(protocol.Dialect) - set(vars(config)) == set()
    assert host.name == wire.NAME and host.title == wire.TITLE
    assert isinstance(host.glue, HostGlue) and host.glue.name == name
    reader: TranscriptReader = host.transcript
    assert callable(reader.parse) and callable(reader.locate)
    assert (host is hosts.FOLDER_DIALECT) == hasattr(config, "load_folder")


def test_the_member_check_sees_a_missing_member() -> None:
    """The canary: a module without one of the wire's members fails the check above."""
    partial = ModuleType("partial")
    vars(partial).update({k: v for k, v in vars(claude_wire).items() if k != "translate"})
    assert _members(protocol.Wire) - set(vars(partial)) == {"translate"}


@pytest.mark.parametrize(("event", "sender"), [(claude_bash("ls"), "claude"),
                                               (cursor_event("stop"), "cursor"),
                                               (cline_event("TaskStart"), "cline")])
def test_reading_an_event_loads_the_senders_wire_only(event: object, sender: str) -> None:
    code = ("import sys; from prompthooks.api import parse_event; "
            f"host, _ = parse_event({json.dumps(json.dumps(event))}); print(host.name); "
            "print(*sorted(m for m in sys.modules if m.startswith('prompthooks.hosts.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    told, loaded = proc.stdout.splitlines()
    assert told == sender  # the canary: the event was read, by its host
    assert f"prompthooks.hosts.{sender}.wire" in loaded.split()
    others = {n for n in hosts.NAMES if n != sender}
    assert not [m for m in loaded.split() if m.split(".")[2] in others], loaded


def test_the_folder_dialects_hook_files_are_its_wires_events() -> None:
    # The approval check and the cache list a config folder with the registry's table, so
    # that a folder holding only hooks.json never loads the folder dialect's wire module.
    assert hosts.FOLDER_DIALECT.hook_files == tuple(cline_wire.CONFIG_EVENTS)
    assert all(host.hook_files == () for host in hosts.HOSTS.values()
               if host is not hosts.FOLDER_DIALECT)


@pytest.mark.parametrize("with_file", [False, True])
def test_digesting_a_config_folder_loads_no_wire(tmp_path: Path, with_file: bool) -> None:
    folder = tmp_path / ".prompthooks"
    folder.mkdir()
    (folder / "hooks.json").write_text('{"hooks": {}}')
    if with_file:
        (folder / "PreToolUse").write_text("#!/bin/sh\nexit 0\n")
        (folder / "notes.txt").write_text("not a hook file")
    code = ("import sys; from pathlib import Path; "
            "from prompthooks.loading.approval_digest import digest; "
            f"d = digest(Path({str(folder)!r}), Path({str(tmp_path)!r})); print(*d.files); "
            "print(*sorted(m for m in sys.modules if m.startswith('prompthooks.hosts.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    found, loaded = [*proc.stdout.splitlines(), ""][:2]
    # The canary: the folder's files were digested, the hook file among them when there.
    assert found.split() == (["hooks.json", "PreToolUse"] if with_file else ["hooks.json"])
    assert not [m for m in loaded.split() if m.endswith(".wire")], loaded
