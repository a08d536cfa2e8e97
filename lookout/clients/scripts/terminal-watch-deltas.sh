#!/usr/bin/env bash
# Start a program that prints a line every 0.2 s and follow its screen's changes as deltas until it exits:
# each changed row is printed as "row N: text" (curl).
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... terminal-watch-deltas.sh
set -euo pipefail
source "$(dirname "$0")/common.bash"
need curl jq

program='for i in 1 2 3 4 5; do echo "tick $i"; sleep 0.2; done'
terminal=$(curl_api POST /v1/terminals "$(jq -n --arg p "$program" '{command: ["bash", "-c", $p], cols: 40, rows: 8}')")
id=$(jq -r .id <<<"$terminal")
trap 'curl_api DELETE "/v1/terminals/$id?purge=true" >/dev/null' EXIT

cursor=0
while :; do
  # the status first: once it says exited, the deltas already hold the last change
  status=$(curl_api GET "/v1/terminals/$id" | jq -r .status)
  page=$(curl_api GET "/v1/terminals/$id/deltas?cursor=$cursor&limit=100")
  jq -r '.deltas[].changed[] | select(.[1] != "") | "row \(.[0]): \(.[1])"' <<<"$page"
  cursor=$(jq -r .resume_cursor <<<"$page")
  if [[ $(jq '.deltas | length' <<<"$page") == 0 ]]; then
    [[ $status == running ]] || break
    sleep 0.2
  fi
done
echo "$me: $id $status, deltas read up to cursor $cursor" >&2
