#!/usr/bin/env bash
# The real-server e2e suite in one command, as CI runs it: builds (or reuses, from the cache
# outside the repo) livekit-server and livekit-sip, installs espeak-ng, baresip and sox when
# missing, makes sure Redis answers on 127.0.0.1:6379, runs `npm run test:livekit`, and stops
# whatever it started. Needs Go 1.26 for the first build, and root (or passwordless sudo)
# for missing Debian packages.
#
# Usage: bash scripts/e2e-livekit.sh [vitest arguments, e.g. tests/e2e/sip.test.ts]
set -euo pipefail
cd "$(dirname "$0")/.."

started=0
cleanup() { if [ "$started" = 1 ]; then bash scripts/ci-services.sh stop || true; fi; }
trap cleanup EXIT
bash scripts/livekit-tools.sh --sip
bash scripts/speech-tools.sh
bash scripts/ci-services.sh --redis --no-postgres && started=1
CI="${CI:-true}" npm run test:livekit -- "$@"
