#!/bin/sh
# Cursor-style reply: keep .env files away from the model.
input=$(cat)
case "$input" in
  *'.env"'*|*'.env.'*)
    echo '{"permission": "deny", "user_message": "Reading .env files is blocked.", "agent_message": "That file holds secrets; ask the user for the values you need."}' ;;
  *) echo '{"permission": "allow"}' ;;
esac
