#!/usr/bin/env bash
# terminal-run.sh with httpie: open a terminal, run one command, print its output, exit with its exit code.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... terminal-run-httpie.sh ['command line']
set -euo pipefail
source "$(dirname "$0")/common.bash"
need http jq

command=${1:-'echo "hello from lookout"; uname -s'}

# httpie items: key=value is a JSON string, key:=json a JSON value
id=$(http_api POST /v1/terminals command:='["bash"]' name=terminal-run-httpie | jq -r .id)
trap 'http_api DELETE "/v1/terminals/$id" purge==true >/dev/null' EXIT

waited=$(http_api POST "/v1/terminals/$id/act" input:="$(jq -n --arg t "$command" '{text: $t, keys: ["Enter"]}')" \
  until:='{"block_end": true}' timeout_ms:=60000 screen:='{"around_cursor": 0}' detail:=true | jq .wait)
[[ $(jq -r .matched <<<"$waited") == true ]] || die "the command did not finish within 60 s"
block=$(jq -r .block.n <<<"$waited")
exit_code=$(jq -r .block.exit_code <<<"$waited")

# query parameters are name==value
http_api GET "/v1/terminals/$id/blocks/$block" max_tokens==2000 | jq -r .output.text
echo "$me: exit code $exit_code" >&2
exit "$exit_code"
