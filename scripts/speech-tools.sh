#!/usr/bin/env bash
# Installs what audio-mode scenarios (`taskline test --audio`) need on a Debian machine:
# espeak-ng (the caller's and the agent's voice). Installs only when it is missing, with
# apt-get (as root, or through passwordless sudo). Idempotent; prints what it did.
#
# Usage: scripts/speech-tools.sh [--if-possible]
#   --if-possible  never install and never fail: report what is missing (audio tests then
#                  skip with that reason outside CI)
set -euo pipefail

IF_POSSIBLE=0
[ "${1:-}" = "--if-possible" ] && IF_POSSIBLE=1

log() { printf '[speech-tools] %s\n' "$*"; }

if command -v espeak-ng >/dev/null 2>&1; then
  log "espeak-ng $(espeak-ng --version | awk '{print $4; exit}') is installed"
  exit 0
fi
if [ "$IF_POSSIBLE" = 1 ]; then
  log "espeak-ng is missing: audio-mode scenarios will be skipped (install: bash scripts/speech-tools.sh)"
  exit 0
fi
run_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else
    log "error: need root (or passwordless sudo) to run: $*" >&2
    exit 1
  fi
}
log "installing espeak-ng with apt-get"
run_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
run_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends espeak-ng
log "espeak-ng $(espeak-ng --version | awk '{print $4; exit}') installed"
