#!/usr/bin/env bash
# terminal-watch-deltas.sh with httpie: follow a program's screen changes as deltas until it exits.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... terminal-watch-deltas-httpie.sh
set -euo pipefail
source "$(dirname "$0")/common.bash"
need http jq

program='for i in 1 2 3 4 5; do echo "tick $i"; sleep 0.2; done'
id=$(http_api POST /v1/terminals command:="$(jq -n --arg p "$program" '["bash", "-c", $p]')" cols:=40 rows:=8 \
  | jq -r .id)
trap 'http_api DELETE "/v1/terminals/$id" purge==true >/dev/null' EXIT

cursor=0
while :; do
  # the status first: once it says exited, the deltas already hold the last change
  status=$(http_api GET "/v1/terminals/$id" | jq -r .status)
  page=$(http_api GET "/v1/terminals/$id/deltas" cursor=="$cursor" limit==100)
  jq -r '.deltas[].changed[] | select(.[1] != "") | "row \(.[0]): \(.[1])"' <<<"$page"
  cursor=$(jq -r .resume_cursor <<<"$page")
  if [[ $(jq '.deltas | length' <<<"$page") == 0 ]]; then
    [[ $status == running ]] || break
    sleep 0.2
  fi
done
echo "$me: $id $status, deltas read up to cursor $cursor" >&2
