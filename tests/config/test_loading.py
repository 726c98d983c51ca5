"""Config loading: three dialects, discovery order, and errors that name file and JSON path."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompthooks.api import load_config
from prompthooks.hosts import file_dialect

from ..helpers import approve, claude_config, cursor_config, write_json, write_script


def test_claude_file(tmp_path: Path) -> None:
    path = claude_config(tmp_path / "hooks.json", "PreToolUse",
                         {"command": "a.sh", "timeout": 5}, {"command": "b.sh"}, matcher="Bash")
    config = load_config([str(path)])
    assert [h.command for h in config.hooks] == ["a.sh", "b.sh"]
    first = config.hooks[0]
    assert (first.dialect, first.trigger.event, first.timeout, first.fail_closed) == (
        "claude", "PreToolUse", 5.0, False)
    assert config.hooks[1].timeout == 600.0  # Claude Code's command default
    assert first.label.endswith("hooks.PreToolUse[0].hooks[0]")


def test_cursor_file(tmp_path: Path) -> None:
    path = cursor_config(tmp_path / "hooks.json", "preToolUse",
                         {"command": "./g.sh", "matcher": "Shell", "timeout": 5,
                          "failClosed": True})
    (hook,) = load_config([str(path)]).hooks
    assert (hook.dialect, hook.trigger.event, hook.fail_closed, hook.loop_limit) == (
        "cursor", "PreToolUse", True, 5)


def test_cursor_loop_limit_null_means_no_limit(tmp_path: Path) -> None:
    path = cursor_config(tmp_path / "hooks.json", "stop", {"command": "x", "loop_limit": None})
    (hook,) = load_config([str(path)]).hooks
    assert hook.loop_limit is None


def test_cline_directory(tmp_path: Path) -> None:
    write_script(tmp_path / "PreToolUse", "echo '{}'")
    write_script(tmp_path / "TaskStart", "echo '{}'")
    (tmp_path / "README.md").write_text("not a hook")
    config = load_config([str(tmp_path)])
    assert sorted((h.config_event, h.trigger.event) for h in config.hooks) == [
        ("PreToolUse", "PreToolUse"), ("TaskStart", "SessionStart")]
    assert all(h.dialect == "cline" and h.timeout == 30.0 for h in config.hooks)


@pytest.mark.parametrize(("data", "dialect"), [
    ({"version": 1, "hooks": {}}, "cursor"),
    ({"hooks": {"beforeShellExecution": [{"command": "x"}]}}, "cursor"),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}}, "claude"),
    ({"hooks": {"PreToolUse": [{"command": "x"}]}}, "cursor"),
    ({"hooks": {}}, "claude"),
])
def test_dialect_detected_from_the_file(data: dict[str, object], dialect: str) -> None:
    assert file_dialect(data).name == dialect


ERRORS = [
    ({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                             "command": "x",
                                                             "timeout": "5"}]}]}},
     "hooks.PreToolUse[0].hooks[0].timeout: Input should be a valid number"),
    ({"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}},
     "hooks.PreToolUse[0].hooks[0]: a command hook needs a non-empty 'command'"),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": []}]}},
     "hooks.PreToolUse[0].matcher: invalid matcher regex 'Bash('"),
    ({"version": 1, "hooks": {"preToolUse": [{"command": "x", "failClosed": "yes"}]}},
     "hooks.preToolUse[0].failClosed: Input should be a valid boolean"),
    ({"hooks": {"PreToolUse": "nope"}}, "hooks.PreToolUse: Input should be a valid list"),
    ([1, 2], "the top level must be a JSON object"),
]


@pytest.mark.parametrize(("data", "message"), ERRORS)
def test_invalid_file_names_file_and_json_path(tmp_path: Path, data: object,
                                               message: str) -> None:
    path = write_json(tmp_path / "hooks.json", data)
    config = load_config([str(path)])
    assert config.hooks == []
    (error,) = config.errors
    assert error.startswith(f"{path}: ")
    assert message in error


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text('{"hooks": {,}}')
    (error,) = load_config([str(path)]).errors
    assert error == f"{path}: not valid JSON: line 1 column 12: Expecting property name " \
                    "enclosed in double quotes"


def test_bom_in_config_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"version": 1, "hooks": {"stop": [{"command": "x"}]}}')
    assert [h.command for h in load_config([str(path)]).hooks] == ["x"]


def test_unknown_keys_and_events_warn_but_load(tmp_path: Path) -> None:
    path = write_json(tmp_path / "settings.json", {
        "permissions": {"allow": []},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "ok.sh", "statusMessage": "checking", "shiny": 1}]}],
            "NotAnEvent": [{"hooks": [{"type": "command", "command": "x"}]}]},
    })
    config = load_config([str(path)])
    assert [h.command for h in config.hooks] == ["ok.sh"]
    assert any("unknown key 'permissions'" in w for w in config.warnings)
    assert any("hooks.PreToolUse[0].hooks[0]: unknown key 'shiny'" in w for w in config.warnings)
    assert any("NotAnEvent: unknown Claude Code event" in e for e in config.unknown_events)


def _discovery_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    managed, project, user_cfg = tmp_path / "etc", tmp_path / "proj", tmp_path / "xdg"
    claude_config(managed / "hooks.json", "Stop", {"command": "managed"})
    claude_config(project / ".prompthooks" / "hooks.json", "Stop", {"command": "project"})
    claude_config(user_cfg / "prompthooks" / "hooks.json", "Stop", {"command": "user"})
    write_script(project / ".prompthooks" / "hooks" / "TaskComplete", "echo '{}'")
    approve(project / ".prompthooks")
    approve(user_cfg / "prompthooks", "user")
    return managed, project, user_cfg


def test_discovery_order_managed_project_user(tmp_path: Path) -> None:
    managed, project, user_cfg = _discovery_tree(tmp_path)
    config = load_config(project_dir=str(project), environ={"XDG_CONFIG_HOME": str(user_cfg)},
                         managed_dir=managed)
    ranked = sorted(config.hooks, key=lambda h: (h.source.priority, h.index))
    assert [(h.source.name, h.command or Path(h.executable or "").name) for h in ranked] == [
        ("managed", "managed"), ("project", "project"), ("project", "TaskComplete"),
        ("user", "user")]


def test_explicit_config_replaces_project_and_user_not_managed(tmp_path: Path) -> None:
    managed, project, user_cfg = _discovery_tree(tmp_path)
    mine = claude_config(tmp_path / "mine.json", "Stop", {"command": "mine"})
    config = load_config([str(mine)], project_dir=str(project),
                         environ={"XDG_CONFIG_HOME": str(user_cfg)}, managed_dir=managed)
    assert [h.command for h in config.hooks] == ["managed", "mine"]
    alone = load_config([str(mine)], project_dir=str(project), managed_dir=managed,
                        keep_managed=False)  # testing a policy on its own
    assert [h.command for h in alone.hooks] == ["mine"]


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    config = load_config([str(tmp_path / "nope.json")])
    assert config.errors == [f"{tmp_path / 'nope.json'}: no such file or folder"]


def test_cursor_working_directory_rule(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    inside = cursor_config(project / ".prompthooks" / "hooks.json", "stop", {"command": "x"})
    outside = cursor_config(tmp_path / "home" / ".cursor" / "hooks.json", "stop",
                            {"command": "y"})
    hooks = load_config([str(inside), str(outside)], project_dir=str(project)).hooks
    assert [h.cwd for h in hooks] == [str(project.resolve()), str(outside.parent.resolve())]
