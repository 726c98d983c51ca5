"""``prompthooks completion bash|zsh|fish``: print the shell's completion script, generated
from this version's own argparse tree, so it always knows every subcommand, option and choice.

Options whose values are paths (``--config``, ``--db``, ``--project``...) complete file names;
options with choices complete those; everything else completes nothing (no guessing).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import EXIT_OK

# Metavars that name a file or folder.
_PATHS = frozenset({"PATH", "DIR", "CASSETTE", "DATASET"})


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    help: str
    takes_value: bool
    choices: tuple[str, ...]
    is_path: bool


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]
    words: tuple[str, ...]  # positional choices (``log stats``)
    path_args: bool  # positionals that are paths (``test PATH...``)


def _options(parser: argparse.ArgumentParser) -> Iterator[Option]:
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        takes = action.nargs != 0
        metavar = action.metavar if isinstance(action.metavar, str) else ""
        yield Option(tuple(action.option_strings), _one_line(action.help),
                     takes, tuple(str(c) for c in action.choices or ()),
                     takes and metavar in _PATHS)


def _one_line(text: str | None, limit: int = 60) -> str:
    """The help's first part, one line, cut at a word."""
    flat = " ".join((text or "").split()).split(" (")[0]
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def commands(parser: argparse.ArgumentParser) -> tuple[list[Option], list[Command]]:
    """The top-level options and every subcommand, as the parser defines them."""
    found: list[Command] = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            positionals = [a for a in sub._actions if not a.option_strings]
            words = tuple(str(c) for a in positionals for c in a.choices or ())
            paths = any(not a.choices and isinstance(a.metavar, str) and a.metavar in _PATHS
                        for a in positionals)
            found.append(Command(name, _one_line(helps.get(name)), tuple(_options(sub)), words,
                                 paths))
    return list(_options(parser)), found


def _flags(options: list[Option] | tuple[Option, ...]) -> str:
    return " ".join(flag for option in options for flag in option.flags)


def bash(parser: argparse.ArgumentParser) -> str:
    top, subs = commands(parser)
    prog = parser.prog
    cases: list[str] = []
    for command in subs:
        values: list[str] = []
        for option in command.options:
            if not option.takes_value:
                continue
            pattern = "|".join(option.flags)
            if option.choices:
                values.append(f'            {pattern}) COMPREPLY=($(compgen -W '
                              f'"{" ".join(option.choices)}" -- "$cur")); return;;')
            elif option.is_path:
                values.append(f'            {pattern}) COMPREPLY=($(compgen -f -- "$cur")); '
                              'return;;')
            else:
                values.append(f"            {pattern}) return;;")
        rest = ('COMPREPLY=($(compgen -f -- "$cur"))' if command.path_args
                else f'COMPREPLY=($(compgen -W "{" ".join(command.words)}" -- "$cur"))')
        cases.append(
            f"        {command.name})\n"
            f'            case "$prev" in\n' + "".join(v + "\n" for v in values) +
            "            esac\n"
            f'            if [[ "$cur" == -* ]]; then\n'
            f'                COMPREPLY=($(compgen -W "{_flags(command.options)}" -- "$cur"))\n'
            "            else\n"
            f"                {rest}\n"
            "            fi\n"
            "            ;;")
    names = " ".join(c.name for c in subs)
    function = f"_{prog.replace('-', '_')}"
    return f"""# bash completion for {prog}; load it with:
#   eval "$({prog} completion bash)"      (e.g. in ~/.bashrc)
{function}() {{
    local cur prev command="" i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            -*) ;;
            *) command="${{COMP_WORDS[i]}}"; break;;
        esac
    done
    case "$command" in
        "")
            COMPREPLY=($(compgen -W "{names} {_flags(top)}" -- "$cur"))
            ;;
{chr(10).join(cases)}
    esac
}}
complete -o default -F {function} {prog}
"""


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh_spec(option: Option) -> str:
    help_text = option.help.replace("[", "(").replace("]", ")").replace(":", " -")
    described = f"[{help_text}]" if help_text else ""
    if option.takes_value:
        action = (f"({' '.join(option.choices)})" if option.choices
                  else "_files" if option.is_path else " ")
        value = f":{option.flags[-1].lstrip('-')}:{action}"
    else:
        value = ""
    if len(option.flags) == 1:
        return _zsh_quote(f"{option.flags[0]}{described}{value}")
    # '(-h --help)'{-h,--help}'[...]': the braces unquoted, for zsh to expand into two specs.
    group = " ".join(option.flags)
    return (_zsh_quote(f"({group})") + "{" + ",".join(option.flags) + "}"
            + _zsh_quote(f"{described}{value}"))


def zsh(parser: argparse.ArgumentParser) -> str:
    top, subs = commands(parser)
    prog = parser.prog
    function = f"_{prog.replace('-', '_')}"
    described = "\n".join(
        "        " + _zsh_quote(f"{c.name}:{c.help.replace(':', ' -')}") for c in subs)
    cases: list[str] = []
    for command in subs:
        specs = [_zsh_spec(option) for option in command.options]
        if command.words:
            specs.append(_zsh_quote(f"*::{command.name}:({' '.join(command.words)})"))
        elif command.path_args:
            specs.append(_zsh_quote("*:file:_files"))
        cases.append(f"        {command.name})\n            _arguments -s \\\n"
                     + " \\\n".join(f"                {spec}" for spec in specs)
                     + "\n            ;;")
    top_specs = " ".join(_zsh_spec(option) for option in top)
    return f"""#compdef {prog}
# zsh completion for {prog}; load it with:
#   eval "$({prog} completion zsh)"        (e.g. in ~/.zshrc, after compinit)
# or save it as _{prog} in a folder on $fpath.
{function}() {{
    local -a commands
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe -t commands command commands
        _arguments {top_specs}
        return
    fi
    local command=$words[2]
    shift words
    (( CURRENT-- ))
    case $command in
{chr(10).join(cases)}
    esac
}}
if [[ "$funcstack[1]" == "{function}" ]]; then
    {function} "$@"
else
    compdef {function} {prog}
fi
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(prog: str, condition: str, option: Option) -> str:
    parts = [f"complete -c {prog} -n {_fish_quote(condition)}"]
    for flag in option.flags:
        parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
    if option.choices:
        parts.append(f"-x -a {_fish_quote(' '.join(option.choices))}")
    elif option.is_path:
        parts.append("-r -F")
    elif option.takes_value:
        parts.append("-x")
    if option.help:
        parts.append(f"-d {_fish_quote(option.help)}")
    return " ".join(parts)


def fish(parser: argparse.ArgumentParser) -> str:
    top, subs = commands(parser)
    prog = parser.prog
    out = [f"# fish completion for {prog}; load it with:",
           f"#   {prog} completion fish | source",
           f"# or save it as ~/.config/fish/completions/{prog}.fish",
           f"complete -c {prog} -f"]
    first = "__fish_use_subcommand"
    for command in subs:
        out.append(f"complete -c {prog} -n {first} -a {command.name} "
                   f"-d {_fish_quote(command.help)}")
    out += [_fish_option(prog, first, option) for option in top]
    for command in subs:
        condition = f"__fish_seen_subcommand_from {command.name}"
        out += [_fish_option(prog, condition, option) for option in command.options]
        if command.words:
            out.append(f"complete -c {prog} -n {_fish_quote(condition)} -a "
                       f"{_fish_quote(' '.join(command.words))}")
        elif command.path_args:
            out.append(f"complete -c {prog} -n {_fish_quote(condition)} -F")
    return "\n".join(out) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](parser)


def main(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell, args.parser))
    sys.stdout.flush()
    return EXIT_OK
