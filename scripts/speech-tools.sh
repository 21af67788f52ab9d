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
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
apt_install espeak-ng
log "espeak-ng $(espeak-ng --version | awk '{print $4; exit}') installed"
