# Sourced by the example scripts beside it: checks the tools and the environment they need.
#   LOOKOUT_URL    the daemon (default http://127.0.0.1:8765)
#   LOOKOUT_TOKEN  its API token (`lookout token` prints it)

me=$(basename "$0")

die() {
  echo "$me: $*" >&2
  exit 1
}

# need TOOL...: fail clearly when a tool is missing
need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || die "needs $tool, which is not installed"
  done
}

LOOKOUT_URL=${LOOKOUT_URL:-http://127.0.0.1:8765}
LOOKOUT_URL=${LOOKOUT_URL%/}
[[ -n ${LOOKOUT_TOKEN:-} ]] || die "LOOKOUT_TOKEN is not set (\`lookout token\` prints the daemon's token)"

# curl_api METHOD PATH [JSON]: the daemon's answer on stdout; an error answer, or no daemon, is a clear
# message on stderr and a failed status
curl_api() {
  local method=$1 path=$2 answer status
  local args=(-sS -X "$method" -H "Authorization: Bearer $LOOKOUT_TOKEN" -w '\n%{http_code}')
  [[ $# -ge 3 ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  answer=$(curl "${args[@]}" "$LOOKOUT_URL$path") \
    || die "cannot reach lookout at $LOOKOUT_URL (start it with \`lookout serve\`)"
  status=${answer##*$'\n'}
  answer=${answer%$'\n'*}
  if ((status >= 400)); then
    die "$method $path: HTTP $status: $(jq -r '.error.message' <<<"$answer" 2>/dev/null || echo "$answer")"
  fi
  printf '%s\n' "$answer"
}

# http_api METHOD PATH [httpie request items...]: the same with httpie (`http`)
http_api() {
  local method=$1 path=$2 answer status
  shift 2
  answer=$(http --ignore-stdin --check-status --body -A bearer -a "$LOOKOUT_TOKEN" \
    "$method" "$LOOKOUT_URL$path" "$@" 2>/dev/null) && { printf '%s\n' "$answer"; return; }
  status=$?
  # httpie's exit status: 4 for an HTTP 4xx answer, 5 for a 5xx one, others when no answer came
  ((status == 4 || status == 5)) || die "cannot reach lookout at $LOOKOUT_URL (start it with \`lookout serve\`)"
  die "$method $path: $(jq -r '.error.message' <<<"$answer" 2>/dev/null || echo "$answer")"
}
