#!/usr/bin/env bash
# Installs what audio-mode scenarios (`taskline test --audio`) and the audio tests need on a
# Debian machine:
#   espeak-ng            the agent's voice, and the caller's for the transcription oracle
#   sox                  audio fixtures made at test time (tones, a voicemail's beep, a phone line)
#   flite                the callers' voices for a real recogniser (kal16, slt, rms, awb)
#   pocketsphinx-en-us   the US English acoustic model, language model and dictionary
#   python3-pocketsphinx the bindings the warm recogniser process runs on (/usr/bin/python3)
#   pocketsphinx         the command-line recogniser (pocketsphinx_continuous), for checks by hand
# Installs only what is missing, with apt-get (as root, or through passwordless sudo).
# Idempotent; prints what it did.
#
# Usage: scripts/speech-tools.sh [--if-possible]
#   --if-possible  never install and never fail: report what is missing (audio tests then
#                  skip with that reason outside CI)
set -euo pipefail

IF_POSSIBLE=0
[ "${1:-}" = "--if-possible" ] && IF_POSSIBLE=1

log() { printf '[speech-tools] %s\n' "$*"; }

PYTHON=/usr/bin/python3
missing=()
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v sox >/dev/null 2>&1 || missing+=(sox)
command -v flite >/dev/null 2>&1 || missing+=(flite)
command -v pocketsphinx_continuous >/dev/null 2>&1 || missing+=(pocketsphinx)
[ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || missing+=(pocketsphinx-en-us)
{ [ -x "$PYTHON" ] && "$PYTHON" -c 'from pocketsphinx import pocketsphinx' 2>/dev/null; } ||
  missing+=(python3-pocketsphinx)

if [ "${#missing[@]}" -eq 0 ]; then
  log "espeak-ng $(espeak-ng --version | awk '{print $4; exit}'), $(sox --version | awk '{print $2, $3; exit}'), flite $(dpkg-query -W -f='${Version}' flite 2>/dev/null || echo '?'), pocketsphinx $(dpkg-query -W -f='${Version}' pocketsphinx 2>/dev/null || echo '?') are installed"
  exit 0
fi
if [ "$IF_POSSIBLE" = 1 ]; then
  log "missing: ${missing[*]}: audio-mode scenarios that need them will be skipped (install: bash scripts/speech-tools.sh)"
  exit 0
fi
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
apt_install "${missing[@]}"
"$PYTHON" -c 'from pocketsphinx import pocketsphinx' ||
  { log "error: $PYTHON cannot load the pocketsphinx bindings after installing them" >&2; exit 1; }
log "installed: ${missing[*]}"
