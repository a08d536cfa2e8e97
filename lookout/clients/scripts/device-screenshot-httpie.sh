#!/usr/bin/env bash
# device-screenshot.sh with httpie: save a scaled screenshot of an Android device and list its UI elements.
#   usage: LOOKOUT_URL=http://127.0.0.1:8765 LOOKOUT_TOKEN=... device-screenshot-httpie.sh [serial] [file.png]
set -euo pipefail
source "$(dirname "$0")/common.bash"
need http jq

serial=${1:-$(http_api GET /v1/devices | jq -r '[.devices[] | select(.state == "device")][0].serial // empty')}
[[ -n $serial ]] || die "no usable device (GET /v1/devices lists them with their state)"
file=${2:-screenshot.png}

# key:=json is a JSON value; the image comes back inline (base64) with inline:=true
shot=$(http_api POST "/v1/devices/$serial/screenshot" max_dimension:=1000 inline:=true ui:=true)
jq -r .image_b64 <<<"$shot" | base64 -d >"$file"
jq -r --arg file "$file" '"\($file): \(.image.width)x\(.image.height), ~\(.tokens) tokens, \(.obs_id)"' <<<"$shot"

# the UI elements read with the frame (ui:=true), in the image's pixels
jq -r '.ui.elements[] | "[\(.index)] \([.class, (.text // .id), .flags] | map(select(. != null)) | join(" ")) at \(.center | map(tostring) | join(","))"' <<<"$shot"
