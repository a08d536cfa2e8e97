#!/usr/bin/env bash
# Print the agents' history (every action and observation on terminals, devices and pages) as lookout
# renders it within a token budget, one message per paragraph, then what was elided and how to fetch it.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... timeline-history.sh [budget] [resource]
set -euo pipefail
source "$(dirname "$0")/common.bash"
need curl jq

budget=${1:-2000}
[[ $budget =~ ^[0-9]+$ ]] || die "budget must be a number of tokens, not '$budget'"
query="budget=$budget"
[[ -n ${2:-} ]] && query+="&resource=$(jq -rn --arg r "$2" '$r | @uri')"

context=$(curl_api GET "/v1/timeline/context?$query")
jq -r '.messages[] | "[\(.role)] \(.content)\n"' <<<"$context"
jq -r '.metadata | "# \(.total_tokens) of \(.budget) tokens, up to frame \(.last_seq)" +
  (if (.elided | length) > 0 then "; elided: " + ([.elided[] | "\(.from)-\(.to)"] | join(", ")) +
   " (GET /v1/timeline/extract?from=&to=)" else "" end)' <<<"$context"
