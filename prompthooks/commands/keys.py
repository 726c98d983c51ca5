"""``prompthooks keys set|list|remove``: the user's stored model keys (model/keys.py).

A key is read from a prompt that does not echo it, or from stdin when that is not a terminal
(``pass show anthropic | prompthooks keys set anthropic``); never from the command line, where
every process of the user can read it. ``list`` names each provider with a key and where the
key comes from, never the key.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys

from ..errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, PromptHooksError
from ..model import keys

_KEY_LIMIT = 4096  # characters: far longer than any provider's key


def _name(args: argparse.Namespace) -> str:
    name = str(args.name or "").lower()
    if not keys.NAME.match(name):
        raise PromptHooksError(f"keys {args.action}: a provider name is letters, digits and "
                               f"'_' (anthropic, openai, gemini...), not {args.name!r}",
                               EXIT_USAGE)
    return name


def _read_key(name: str) -> str:
    if sys.stdin is not None and sys.stdin.isatty():
        text = getpass.getpass(f"Key for {name} (not shown): ")
    else:
        text = sys.stdin.read(_KEY_LIMIT + 2) if sys.stdin is not None else ""
    key = text.strip()
    if not key:
        raise PromptHooksError(f"keys set {name}: no key was given (type it at the prompt, "
                               "or pipe it on stdin)", EXIT_USAGE)
    if len(key) > _KEY_LIMIT or not key.isprintable() or any(c.isspace() for c in key):
        # A newline or control character would end up in an HTTP header.
        raise PromptHooksError(f"keys set {name}: that is not a key: one line of printable "
                               "characters without spaces", EXIT_USAGE)
    return key


def _sources(environ: os._Environ[str]) -> list[dict[str, str]]:
    stored = keys.read(environ)
    names = set(stored) | {n for n in keys.HOSTED if environ.get(keys.variable(n))}
    rows = []
    for name in sorted(names):
        var = keys.variable(name)
        if environ.get(var):
            where = ("environment (the stored key is not used)" if name in stored
                     else "environment")
        else:
            where = "key store"
        rows.append({"name": name, "variable": var, "source": where})
    return rows


def main(args: argparse.Namespace) -> int:
    environ = os.environ
    try:
        if args.action == "list":
            rows = _sources(environ)
            if getattr(args, "json", False):
                print(json.dumps({"store": str(keys.store_path(environ)), "keys": rows}))
            elif not rows:
                print("no keys: set one with: prompthooks keys set anthropic (or openai, "
                      "gemini...)")
            else:
                width = max(len(r["name"]) for r in rows)
                for r in rows:
                    print(f"{r['name']:<{width}}  {r['source']} ({r['variable']})")
                print(f"store: {keys.store_path(environ)}")
            return EXIT_OK
        name = _name(args)
        if args.action == "set":
            path = keys.set_key(name, _read_key(name), environ)
            print(f"stored the key for {name} in {path} (used when "
                  f"{keys.variable(name)} is not set)")
            return EXIT_OK
        if not keys.remove_key(name, environ):
            print(f"prompthooks: no stored key for {name}", file=sys.stderr)
            return EXIT_ERROR
        print(f"removed the stored key for {name}")
        return EXIT_OK
    except keys.KeyStoreError as exc:
        raise PromptHooksError(f"key store {exc}") from None
