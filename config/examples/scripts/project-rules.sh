#!/bin/sh
# Plain text on stdout becomes context for UserPromptSubmit and SessionStart (Claude Code rule).
cat > /dev/null
echo "Project rules: TypeScript only, tests next to the code, no new dependencies without a note."
