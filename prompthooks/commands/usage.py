"""What the command line says of its own use beyond the parser: each command's help page
(description, examples and exit codes, and the formatter that fits them to the terminal), and
the usage error that names what was probably meant (the closest command, option or choice).

Loaded only when help is printed or a command line does not parse: the command line's parser
carries a one-line summary per command, and ``run`` (which builds that parser on every event)
never loads this module.
"""

from __future__ import annotations

import argparse
import difflib
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The codes every command shares (see docs/hosts.md, "Exit codes of `prompthooks run`"); a page
# lists its own first.
_COMMON = (("3", "internal error (PROMPTHOOKS_DEBUG=1 shows the traceback)"),
           ("64", "bad command-line arguments"),
           ("130", "interrupted (Ctrl-C)"))


@dataclass(frozen=True)
class Page:
    description: str
    examples: tuple[str, ...]
    exits: tuple[tuple[str, str], ...]  # (code, meaning), the command's own
    shared: bool = True  # followed by the codes every command shares


PAGES: dict[str, Page] = {
    "": Page(
        "Run command and prompt hooks for Claude Code, Cursor and Cline: a host's hook "
        "config calls 'prompthooks run', which reads the event on stdin and prints the "
        "host's reply. The other commands install that glue, check and explain configs, "
        "test policies offline and read the audit log.",
        ("prompthooks install --host claude",
         "prompthooks explain < event.json",
         "prompthooks log --since 1h --decision deny",
         "prompthooks COMMAND --help"),
        (("0", "done"),
         ("1", "the command failed: bad input, a bad config, a failed check or test"))),
    "run": Page(
        "Run the hooks for one event read as JSON from stdin and print the host's reply on "
        "stdout; problems go to stderr, one line each. Hosts call this through the glue "
        "that 'prompthooks install' writes.",
        ("prompthooks run < event.json",
         "prompthooks run --host cursor --budget 20 < event.json",
         "prompthooks run --replay tape.yaml < event.json"),
        (("0", "the reply is on stdout (a block is in the host's JSON)"),
         ("1", "the event or a config could not be read, or a config is not approved, and "
               "nothing else had anything to say (the host proceeds)"),
         ("2", "block: the event could not be judged and a managed or fail-closed hook "
               "could have applied to it (Claude Code and Cursor)"),
         ("3", "the run could not finish (a bug, or the work was killed or did not answer "
               "in time) and no managed or fail-closed hook could apply"),
         ("64", "bad command-line arguments")),
        shared=False),
    "validate": Page(
        "Load the configs that would run here (or the ones named) and print every problem "
        "as 'file: json.path: message', with warnings for what is ignored.",
        ("prompthooks validate",
         "prompthooks validate --config .claude/settings.json",
         "prompthooks validate --json"),
        (("0", "no errors (warnings allowed)"),
         ("1", "a config has an error"))),
    "install": Page(
        "Add prompthooks' glue to a host's own config, so that the host calls "
        "'prompthooks run' on its events. Only what install adds is marked as its own; "
        "the rest of the host's config is kept as it is.",
        ("prompthooks install --host claude --dry-run",
         "prompthooks install --host cursor --scope user",
         "prompthooks install --host cline --events PreToolUse"),
        (("0", "installed, or nothing to change"),
         ("1", "the host's config cannot be read or written, or the glue is refused "
               "(a Cline hook file prompthooks did not write, without --force; a Cursor "
               "event whose overlapping event has glue already)"))),
    "uninstall": Page(
        "Remove exactly the glue that install added to a host's own config; everything "
        "else in it stays.",
        ("prompthooks uninstall --host claude --dry-run",
         "prompthooks uninstall --host cursor --scope user"),
        (("0", "removed, or nothing to remove"),
         ("1", "the host's config cannot be read or written"))),
    "explain": Page(
        "A dry run of one event read from stdin: the config sources found, every hook for "
        "the event with RUNS or SKIP and why, and each prompt as it would be sent. Nothing "
        "runs and no model is called.",
        ("prompthooks explain < event.json",
         "prompthooks explain --host cline --json < event.json"),
        (("0", "explained"),
         ("1", "the event cannot be read"))),
    "doctor": Page(
        "Check the installation: versions, config sources and their approval, each model "
        "with one tiny request, the warm worker, the audit log and its export, and the "
        "glue installed in each host.",
        ("prompthooks doctor",
         "prompthooks doctor --offline --json"),
        (("0", "every check passed (warnings allowed)"),
         ("1", "a check failed, or the project folder does not exist"))),
    "trust": Page(
        "Approve the project's or the user's config as it is now: a new or changed config "
        "does not run until approved. The approval is of the files' contents; any change "
        "needs a new one.",
        ("prompthooks trust",
         "prompthooks trust --user",
         "prompthooks trust --list",
         "prompthooks trust --revoke"),
        (("0", "approved, revoked or listed"),
         ("1", "nothing to approve, or the approval cannot be written"))),
    "log": Page(
        "Recent decisions from the audit log, newest first; 'log stats' sums them per hook "
        "(runs, decisions, block rate, latency, tokens, cost). On a narrow terminal the "
        "least needed columns are left out: --json or --format jsonl has every field.",
        ("prompthooks log --since 1h",
         "prompthooks log --decision deny --hook secrets",
         "prompthooks log --follow",
         "prompthooks log stats --since 7d"),
        (("0", "printed (also when the log does not exist yet, and when --follow is ended "
               "with Ctrl-C)"),
         ("1", "the audit log cannot be read"))),
    "keys": Page(
        "Store a model key for prompt hooks, for hosts started from the desktop that never "
        "see a shell profile's export. A stored key is used only when the environment does "
        "not set that provider's variable, only for that provider's own address, and never "
        "for a managed hook. 'set' reads the key from a prompt that does not echo it, or "
        "from stdin; 'list' names the keys and where each comes from, never their values.",
        ("prompthooks keys set anthropic",
         "printf '%s' \"$KEY\" | prompthooks keys set openai",
         "prompthooks keys list",
         "prompthooks keys remove gemini"),
        (("0", "stored, listed or removed"),
         ("1", "no stored key of that name, or the store cannot be read or written"))),
    "aliases": Page(
        "Short names for models, used wherever a hook, the config or PROMPTHOOKS_MODEL "
        "names a model (one level deep; never for managed hooks or test suites).",
        ("prompthooks aliases set fast openai/gpt-4.1-mini",
         "prompthooks aliases list",
         "prompthooks aliases remove fast"),
        (("0", "set, listed or removed"),
         ("1", "no alias of that name, or the file cannot be read or written"))),
    "serve": Page(
        "Run the warm worker in the foreground: runs handed to it skip the interpreter's "
        "start and the model client's import. 'run' starts it on demand; start it by hand "
        "for a fixed setup. With --system, root's process for managed events, each run "
        "done as the user who sent it.",
        ("prompthooks serve",
         "prompthooks serve --idle 3600",
         "sudo prompthooks serve --system"),
        (("0", "exited after the idle time, or another worker already serves"),
         ("1", "cannot listen (a folder that is not private, or for --system one others "
               "can write; a lock or socket error)"))),
    "demo": Page(
        "Run example events of every host through the example hooks, offline, on recorded "
        "model replies, and print what each host would be told.",
        ("prompthooks demo",
         "prompthooks demo | less"),
        (("0", "shown"),
         ("1", "the example files are not installed"))),
    "test": Page(
        "Run policy test cases (YAML case files) offline, from recorded model replies, and "
        "print PASS, FAIL or ERROR per case. --record asks the model and refreshes the "
        "recordings; --rerecord reports drifted verdicts without writing.",
        ("prompthooks test tests/policies",
         "prompthooks test --library",
         "prompthooks test cases.yaml --record --model gpt-4o-mini",
         "prompthooks test cases.yaml --write-references"),
        (("0", "every case passed"),
         ("1", "a case failed or errored, a model call failed, or a case file or its "
               "config cannot be read"))),
    "completion": Page(
        "Print a shell completion script for this version's commands, options and "
        "choices.",
        ('eval "$(prompthooks completion bash)"',
         "prompthooks completion fish > ~/.config/fish/completions/prompthooks.fish"),
        (("0", "printed"),)),
    "packs": Page(
        "Fetch the policy packs the configs pin into the user's cache ('run' never "
        "fetches), or list them with their state.",
        ("prompthooks packs fetch",
         "prompthooks packs list --json"),
        (("0", "fetched or listed"),
         ("1", "a pack could not be fetched, or a config cannot be read"))),
    "managed": Page(
        "Validate the managed policy and write it, compiled, into its folder "
        "(compiled-policy.json), so each event loads it without validating it again. Run "
        "it as the folder's owner after every change to the policy and every upgrade of "
        "prompthooks: a compiled policy that no longer matches is ignored (events validate "
        "the policy again), and one written by anybody else is never read.",
        ("sudo prompthooks managed compile",
         "prompthooks managed compile --managed-dir ./policy"),
        (("0", "compiled"),
         ("1", "the policy has problems, uses policy packs, or the folder is not yours"))),
    "autoupdate": Page(
        "Move each pinned pack to its newest tag and rewrite the config, like pre-commit "
        "autoupdate. Changed configs then need a new approval (prompthooks trust).",
        ("prompthooks autoupdate",
         "prompthooks autoupdate --freeze"),
        (("0", "updated, or already up to date"),
         ("1", "a pack could not be updated, or a config cannot be rewritten"))),
    "try-pack": Page(
        "Run a policy pack's test suites without using it: a folder, or a git URL or path "
        "fetched into a temporary copy.",
        ("prompthooks try-pack ./my-pack",
         "prompthooks try-pack https://example.com/pack.git --rev v1"),
        (("0", "every case passed"),
         ("1", "a case failed or errored, or the pack cannot be fetched or read"))),
    "eval": Page(
        "Measure hooks on a labeled dataset (JSON Lines: an event and whether it should be "
        "blocked): precision, recall, false-positive rate, latency and cost per model. "
        "With --library, measure every shipped policy on its benchmark (public corpora, "
        "prompts/bench/) beside a regex baseline.",
        ("prompthooks eval data.jsonl --config hooks.json",
         "prompthooks eval data.jsonl --model a --model b",
         "prompthooks eval data.jsonl --min-recall 0.9 --report r.html",
         "prompthooks eval --library --model gpt-4.1-mini --report bench.md"),
        (("0", "measured, every threshold met"),
         ("1", "a threshold was missed (with --library: a benchmark's), or the dataset, "
               "config or report cannot be read or written"))),
}


def page(prog: str) -> Page | None:
    """The page of the parser named ``prog`` (``prompthooks`` or ``prompthooks COMMAND``)."""
    return PAGES.get(prog.partition(" ")[2])


def epilog(found: Page) -> str:
    """Examples, then exit codes: the command's own, then the shared ones it does not say."""
    own = {code for code, _ in found.exits}
    codes = (*found.exits, *(item for item in _COMMON if found.shared and item[0] not in own))
    examples = "\n".join(f"  {line}" for line in found.examples)
    width = max(len(code) for code, _ in codes)
    exits = "\n".join(f"  {code:<{width}}  {meaning}" for code, meaning in codes)
    return f"examples:\n{examples}\n\nexit codes:\n{exits}"


_ITEM = re.compile(r"^(\s+\S+\s\s+)(.*)$")


class Formatter(argparse.HelpFormatter):
    """Paragraphs wrapped to the terminal; indented lines (examples, exit codes) kept as
    written, an exit code's meaning wrapped under itself."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        # argparse measures the commands listed under COMMAND without their own indent, so
        # the longest ones ("uninstall") would go on a line of their own.
        if action.help is not argparse.SUPPRESS:
            for sub in self._iter_indented_subactions(action):
                width = len(self._format_action_invocation(sub)) + self._current_indent
                self._action_max_length = max(self._action_max_length, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(textwrap.wrap(" ".join(paragraph), width, initial_indent=indent,
                                         subsequent_indent=indent, break_on_hyphens=False,
                                         break_long_words=False))
                paragraph.clear()

        for line in text.splitlines():
            if not line.strip():
                flush()
                out.append("")
            elif not line.startswith(" ") and not line.endswith(":"):
                paragraph.append(line)
            else:
                flush()
                item = _ITEM.match(line)
                if line.startswith(" ") and item and len(indent + line) > width:
                    hang = indent + " " * len(item[1])
                    out.extend(textwrap.wrap(item[2], width, initial_indent=indent + item[1],
                                             subsequent_indent=hang, break_long_words=False,
                                             break_on_hyphens=False))
                else:
                    out.append(indent + line)
        flush()
        return "\n".join(out)


# Usage errors -----------------------------------------------------------------------------

def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` is most likely a typo of, if one is close enough."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _meant(word: str, candidates: Iterable[str]) -> str:
    match = closest(word, candidates)
    return f"; did you mean {match!r}?" if match else ""


def invalid_choice(action: argparse.Action, value: object) -> str:
    """The line for a value not among ``action``'s choices (a command, ``--host foo``)."""
    choices = [str(choice) for choice in action.choices or ()]
    if isinstance(action, argparse._SubParsersAction):
        meant = _meant(str(value), choices)
        return f"unknown command {value!r}" + (meant or f" (one of: {', '.join(choices)})")
    listed = ", ".join(repr(choice) for choice in choices)
    return f"invalid choice: {value!r} (choose from {listed}){_meant(str(value), choices)}"


def unrecognized(words: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """The line for arguments ``parser`` does not take, naming the closest option of each."""
    options = [flag for action in parser._actions for flag in action.option_strings
               if action.help != argparse.SUPPRESS]
    names = [word.partition("=")[0] for word in words if word.startswith("-")]
    text = f"unrecognized arguments: {' '.join(words)}"
    early = [name for name in names if name in options]
    if early:  # the command's own option, given before the command (`prompthooks --json log`)
        return text + f"; give {', '.join(early)} after the command: {parser.prog} {early[0]}"
    typos = {name: match for name in names if (match := closest(name, options)) is not None}
    if len(typos) == 1:
        return text + f"; did you mean {next(iter(typos.values()))!r}?"
    if typos:
        return text + "; did you mean " + ", ".join(f"{match!r} for {name!r}"
                                                    for name, match in typos.items()) + "?"
    return text
