#!/usr/bin/env bash
# Installs what the console's browser test (`npm run test:browser`) needs on a Debian machine:
# Chromium (driven headless by playwright-core). Installs only when it is missing, with apt-get
# (as root, or through passwordless sudo). Idempotent; prints what it did.
#
# Usage: scripts/browser-tools.sh [--if-possible]
#   --if-possible  never install and never fail: report what is missing (the browser test then
#                  skips with that reason outside CI)
set -euo pipefail

IF_POSSIBLE=0
[ "${1:-}" = "--if-possible" ] && IF_POSSIBLE=1

log() { printf '[browser-tools] %s\n' "$*"; }
find_chromium() { command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true; }

bin="$(find_chromium)"
if [ -n "$bin" ]; then
  log "$("$bin" --version 2>/dev/null | head -n1) is installed at $bin"
  exit 0
fi
if [ "$IF_POSSIBLE" = 1 ]; then
  log "chromium is missing: the browser test will be skipped (install: bash scripts/browser-tools.sh)"
  exit 0
fi
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
apt_install chromium fonts-dejavu-core
bin="$(find_chromium)"
log "$("$bin" --version 2>/dev/null | head -n1) installed at $bin"
