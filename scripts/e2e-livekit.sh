#!/usr/bin/env bash
# The real-server e2e suite in one command, as CI runs it: builds (or reuses, from the cache
# outside the repo) livekit-server and livekit-sip, installs espeak-ng, baresip, sox and
# redis-server when missing, and runs `npm run test:livekit`, which starts its own server,
# SIP service and Redis (on ports of its own) and stops them by PID. Needs Go 1.26 for the
# first build, and root (or passwordless sudo) for missing Debian packages.
#
# Usage: bash scripts/e2e-livekit.sh [vitest arguments, e.g. tests/e2e/sip.test.ts]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/livekit-tools.sh --sip
bash scripts/speech-tools.sh
CI="${CI:-true}" npm run test:livekit -- "$@"
