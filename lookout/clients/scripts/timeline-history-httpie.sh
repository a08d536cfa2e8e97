#!/usr/bin/env bash
# timeline-history.sh with httpie: the history within a token budget, one message per paragraph.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... timeline-history-httpie.sh [budget]
set -euo pipefail
source "$(dirname "$0")/common.bash"
need http jq

http_api GET /v1/timeline/context budget=="${1:-2000}" | jq -r '.messages[] | "[\(.role)] \(.content)\n"'
