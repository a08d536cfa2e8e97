#!/usr/bin/env bash
# Take a scaled screenshot of an Android device, save it, and tap the centre of the first UI element whose
# text matches (curl). Coordinates are the image's pixels: lookout converts them to the device.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... device-screenshot.sh [serial] [file.png] [text]
set -euo pipefail
source "$(dirname "$0")/common.bash"
need curl jq

serial=${1:-$(curl_api GET /v1/devices | jq -r '[.devices[] | select(.state == "device")][0].serial // empty')}
[[ -n $serial ]] || die "no usable device (GET /v1/devices lists them with their state)"
file=${2:-screenshot.png}
text=${3:-}

shot=$(curl_api POST "/v1/devices/$serial/screenshot" '{"max_dimension": 1000, "format": "png"}')
curl -sSf -H "Authorization: Bearer $LOOKOUT_TOKEN" -o "$file" "$LOOKOUT_URL$(jq -r .url <<<"$shot")" \
  || die "cannot download the image"
jq -r --arg file "$file" '"\($file): \(.image.width)x\(.image.height) of a \(.device.width)x\(.device.height)
screen (scale \(.scale_factor)), ~\(.tokens) tokens, \(.obs_id)\(if .warning then "\nwarning: " + .warning else "" end)"' \
  <<<"$shot"

if [[ -n $text ]]; then
  obs=$(jq -r .obs_id <<<"$shot")
  found=$(curl_api POST "/v1/devices/$serial/find" "$(jq -n --arg t "$text" --arg o "$obs" '{text: $t, obs_id: $o}')")
  element=$(jq -r '.elements[0].index // empty' <<<"$found")
  [[ -n $element ]] || die "no element with text '$text'"
  curl_api POST "/v1/devices/$serial/tap" "$(jq -n --argjson e "$element" --arg o "$obs" '{element: $e, obs_id: $o}')" \
    | jq -r '"tapped element \(.element.index) (\(.element.text // .element.inner_text // .element.id)) at device pixel \(.device_point | map(tostring) | join(","))"'
fi
