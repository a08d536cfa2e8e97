#!/usr/bin/env bash
# Open a web page in lookout's browser, print its budgeted snapshot (the text an agent reads), then the
# effects of clicking the first link in it, and close the page (curl).
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... page-snapshot.sh URL [max_tokens]
set -euo pipefail
source "$(dirname "$0")/common.bash"
need curl jq

url=${1:?usage: page-snapshot.sh URL [max_tokens]}
max_tokens=${2:-2000}

page=$(curl_api POST /v1/pages "$(jq -n --arg url "$url" '{url: $url}')" | jq -r .id)
trap 'curl_api DELETE "/v1/pages/$page" >/dev/null' EXIT

snapshot=$(curl_api POST "/v1/pages/$page/snapshot" "{\"max_tokens\": $max_tokens}")
jq -r .text <<<"$snapshot"

# refs name elements for actions: click the first link, and show what that did
ref=$(jq -r '.text | capture("- link [^\n]*\\[ref=(?<r>[^]]+)\\]").r // empty' <<<"$snapshot")
if [[ -n $ref ]]; then
  curl_api POST "/v1/pages/$page/action" "{\"action\": \"click\", \"ref\": \"$ref\"}" \
    | jq -c '{clicked: "'"$ref"'", url, effects}'
fi
