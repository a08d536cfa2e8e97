#!/usr/bin/env bash
# Open a terminal, run one command in it, print the command's output and exit with its exit code (curl).
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... terminal-run.sh ['command line']
set -euo pipefail
source "$(dirname "$0")/common.bash"
need curl jq

command=${1:-'echo "hello from lookout"; uname -s'}

# a bash with lookout's shell integration, so the command's end, exit code and output are known
terminal=$(curl_api POST /v1/terminals '{"command": ["bash"], "cols": 120, "rows": 40, "name": "terminal-run"}')
id=$(jq -r .id <<<"$terminal")
trap 'curl_api DELETE "/v1/terminals/$id?purge=true" >/dev/null' EXIT

# type the command, press Enter, and let the daemon wait until it has finished
act=$(jq -n --arg text "$command" \
  '{input: {text: $text, keys: ["Enter"]}, until: {block_end: true}, timeout_ms: 60000, screen: {around_cursor: 0}, detail: true}')
waited=$(curl_api POST "/v1/terminals/$id/act" "$act" | jq .wait)
[[ $(jq -r .matched <<<"$waited") == true ]] || die "the command did not finish within 60 s"
block=$(jq -r .block.n <<<"$waited")
exit_code=$(jq -r .block.exit_code <<<"$waited")

# its output as the terminal showed it, within 2000 tokens (the head and the tail of a longer one)
curl_api GET "/v1/terminals/$id/blocks/$block?max_tokens=2000" | jq -r .output.text
echo "$me: exit code $exit_code" >&2
exit "$exit_code"
