#!/usr/bin/env bash
# Installs what audio-mode scenarios (`taskline test --audio`) and the audio tests need on a
# Debian machine: espeak-ng (the caller's and the agent's voice) and sox (audio fixtures made
# at test time: tones, a voicemail's beep, a phone line). Installs only what is missing, with
# apt-get (as root, or through passwordless sudo). Idempotent; prints what it did.
#
# Usage: scripts/speech-tools.sh [--if-possible]
#   --if-possible  never install and never fail: report what is missing (audio tests then
#                  skip with that reason outside CI)
set -euo pipefail

IF_POSSIBLE=0
[ "${1:-}" = "--if-possible" ] && IF_POSSIBLE=1

log() { printf '[speech-tools] %s\n' "$*"; }

missing=()
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v sox >/dev/null 2>&1 || missing+=(sox)

if [ "${#missing[@]}" = 0 ]; then
  log "espeak-ng $(espeak-ng --version | awk '{print $4; exit}') and $(sox --version | awk '{print $2, $3; exit}') are installed"
  exit 0
fi
if [ "$IF_POSSIBLE" = 1 ]; then
  log "missing: ${missing[*]}: audio-mode scenarios and audio tests will be skipped (install: bash scripts/speech-tools.sh)"
  exit 0
fi
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
apt_install "${missing[@]}"
log "installed ${missing[*]}"
