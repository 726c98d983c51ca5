#!/usr/bin/env bash
# Runs real events from Claude Code, Cursor and Cline through the example hooks in
# config/examples (a Claude-style hooks.json, a Cursor-style cursor-hooks.json and a Cline-style
# hook folder, all loaded together) and prints what prompthooks answers each host.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
examples="$here/examples"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
echo '{}' > "$root/tsconfig.json"   # the demo workspace is a TypeScript project

printf '%-24s %-52s %s\n' "EVENT" "WHAT THE AGENT WANTS" "PROMPTHOOKS ANSWERS (stdout, exit code)"
for file in "$examples"/events/*.json; do
  name=$(basename "$file" .json)
  event=$(sed "s#__DEMO_ROOT__#$root#g" "$file")
  what=$(printf '%s' "$event" | python3 -c '
import json, sys
e = json.load(sys.stdin)
d = e.get("tool_input") or e.get("preToolUse", {}).get("parameters") or e
print(d.get("command") or d.get("path") or d.get("file_path") or e.get("prompt") or "")' \
    | sed "s#$root#<project>#")
  set +e
  answer=$(printf '%s' "$event" | prompthooks run --config "$examples/hooks.json" \
           --config "$examples/cursor-hooks.json" --config "$examples/cline-hooks" 2>/dev/null)
  code=$?
  set -e
  printf '%-24s %-52s %s (exit %s)\n' "$name" "${what:0:50}" "${answer:-<nothing: no objection>}" "$code"
done
