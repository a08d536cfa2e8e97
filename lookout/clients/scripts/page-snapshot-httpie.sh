#!/usr/bin/env bash
# page-snapshot.sh with httpie: open a page, print its budgeted snapshot, and close it.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... page-snapshot-httpie.sh URL [max_tokens]
set -euo pipefail
source "$(dirname "$0")/common.bash"
need http jq

url=${1:?usage: page-snapshot-httpie.sh URL [max_tokens]}
page=$(http_api POST /v1/pages url="$url" | jq -r .id)
trap 'http_api DELETE "/v1/pages/$page" >/dev/null' EXIT
http_api POST "/v1/pages/$page/snapshot" max_tokens:="${2:-2000}" | jq -r .text
