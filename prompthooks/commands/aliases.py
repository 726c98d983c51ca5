"""``prompthooks aliases set|list|remove``: short names for models (model/endpoint.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, PromptHooksError
from ..model import endpoint


def main(args: argparse.Namespace) -> int:
    environ = os.environ
    try:
        found = endpoint.read_aliases(environ)
        if args.action == "list":
            if getattr(args, "json", False):
                print(json.dumps({"file": str(endpoint.aliases_path(environ)), "aliases": found}))
            elif not found:
                print("no aliases: add one with: prompthooks aliases set fast "
                      "openai/gpt-4.1-mini")
            else:
                width = max(len(name) for name in found)
                for name, model in sorted(found.items()):
                    print(f"{name:<{width}}  {model}")
            return EXIT_OK
        name = str(args.name or "")
        if not endpoint.ALIAS_NAME.match(name):
            raise PromptHooksError(f"aliases {args.action}: an alias is letters, digits, '.', "
                                   f"'_' and '-', not {args.name!r}", EXIT_USAGE)
        if args.action == "set":
            model = str(args.model or "").strip()
            if not model or not model.isprintable() or " " in model:
                raise PromptHooksError("aliases set: give the model the alias stands for "
                                       "(prompthooks aliases set fast openai/gpt-4.1-mini)",
                                       EXIT_USAGE)
            if model == name:
                raise PromptHooksError(f"aliases set: {name} cannot stand for itself",
                                       EXIT_USAGE)
            path = endpoint.write_aliases({**found, name: model}, environ)
            print(f"{name} now stands for {model} (in {path})")
            return EXIT_OK
        if args.model is not None:
            raise PromptHooksError("aliases remove: takes the alias only", EXIT_USAGE)
        if found.pop(name, None) is None:
            print(f"prompthooks: no alias {name}", file=sys.stderr)
            return EXIT_ERROR
        endpoint.write_aliases(found, environ)
        print(f"removed the alias {name}")
        return EXIT_OK
    except endpoint.AliasError as exc:
        raise PromptHooksError(f"aliases {exc}") from None
