#!/usr/bin/env bash
# Builds the LiveKit parts the real-server e2e suite (`npm run test:livekit`) runs, from the
# Go module proxy, and caches them on this machine (outside the repo), keyed by version:
#   livekit-server  go install github.com/livekit/livekit-server/cmd/server@v1.13.5
#   livekit-sip     github.com/livekit/sip/cmd/livekit-sip v1.8.0   (only with --sip; cgo with
#                   Debian's libopus-dev libopusfile-dev libsoxr-dev pkg-config; --sip also
#                   installs the SIP phone the tests call with: Debian's baresip, and sox;
#                   and redis-server, which the suite starts on a port of its own for
#                   livekit-sip, never sharing the machine's Redis)
# livekit-sip: the Go module proxy serves github.com/livekit/sip only at v1.8.0, the version
# livekit-server v1.13.5 itself requires (v1.9.0-v1.11.x answer 403 "This module version is
# not available"). `go install …@v1.8.0` still fails, because it reads the module's version
# list for deprecation notices and that list is refused too; so the binary is built with
# `go build` inside a scratch module that requires sip v1.8.0 (same sources, same checksums
# from sum.golang.org).
# A cached binary is reused; nothing is rebuilt unless its version changes. The first build of
# livekit-server takes about 2.5 minutes on 2 cores (a cold module cache adds the downloads).
#
# Usage:
#   scripts/livekit-tools.sh [--sip]          build what is missing (installs Debian packages
#                                             the SIP build needs, as root or through sudo)
#   scripts/livekit-tools.sh --if-possible    build nothing: report what is cached (the suite
#                                             then skips outside CI, with this script's name)
#   scripts/livekit-tools.sh --path server|sip
#                                             print the cached binary's path (exit 1 if absent)
#
# Cache: $TASKLINE_LIVEKIT_BIN (default ${XDG_CACHE_HOME:-$HOME/.cache}/taskline/bin).
set -euo pipefail

SERVER_MODULE=github.com/livekit/livekit-server/cmd/server
SERVER_VERSION=v1.13.5
SIP_MODULE=github.com/livekit/sip
SIP_VERSION=v1.8.0
BIN_DIR="${TASKLINE_LIVEKIT_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/taskline/bin}"
SERVER_BIN="$BIN_DIR/livekit-server-$SERVER_VERSION"
SIP_BIN="$BIN_DIR/livekit-sip-$SIP_VERSION"

log() { printf '[livekit-tools] %s\n' "$*"; }
die() {
  printf '[livekit-tools] error: %s\n' "$*" >&2
  exit 1
}

need_go() {
  # The Go tarball's usual home, when the shell's PATH does not name it.
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    PATH="/usr/local/go/bin:$PATH"
  fi
  command -v go >/dev/null 2>&1 ||
    die "the Go toolchain (1.26 or newer) is not on PATH: install Go to build $1 from the Go module proxy"
}

# go_build MODULE VERSION TARGET [CGO]: go install into a scratch GOBIN, then move into place
# atomically, so an interrupted build never leaves a half-written binary in the cache.
go_build() {
  local module=$1 version=$2 target=$3 cgo=${4:-0} scratch started
  need_go "$module"
  mkdir -p "$BIN_DIR"
  scratch=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
  started=$(date +%s)
  log "building $module@$version with $(go version | awk '{print $3}') (cached afterwards)"
  if ! CGO_ENABLED=$cgo GOBIN="$scratch" go install "$module@$version" 2>"$scratch/build.log"; then
    cat "$scratch/build.log" >&2
    local command="go install $module@$version"
    rm -rf "$scratch"
    die "could not build $module@$version; the command was: $command"
  fi
  mv "$scratch/$(basename "$module")" "$target"
  rm -rf "$scratch"
  log "built $target in $(($(date +%s) - started)) s"
}

server() {
  if [ -x "$SERVER_BIN" ]; then
    log "livekit-server $SERVER_VERSION is cached at $SERVER_BIN"
    return
  fi
  if [ "$IF_POSSIBLE" = 1 ]; then
    log "livekit-server $SERVER_VERSION is not built: the LiveKit e2e suite will be skipped (build it: bash scripts/livekit-tools.sh)"
    return
  fi
  go_build "$SERVER_MODULE" "$SERVER_VERSION" "$SERVER_BIN" 0
}

# The phone side of the SIP tests: baresip calls in, sox makes its audio files, and the
# suite's own redis-server carries livekit-sip's messages (the suite starts and stops it).
phone() {
  local missing=() pkg
  for pkg in baresip sox redis-server; do command -v "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "baresip, sox and redis-server are installed"
    return
  fi
  if [ "$IF_POSSIBLE" = 1 ]; then
    log "${missing[*]} missing: the SIP e2e tests will be skipped (install: bash scripts/livekit-tools.sh --sip)"
    return
  fi
  # shellcheck source=lib/debian.sh
  . "$(dirname "$0")/lib/debian.sh"
  apt_install "${missing[@]}"
}

sip() {
  phone
  if [ -x "$SIP_BIN" ]; then
    log "livekit-sip $SIP_VERSION is cached at $SIP_BIN"
    return
  fi
  if [ "$IF_POSSIBLE" = 1 ]; then
    log "livekit-sip $SIP_VERSION is not built: the SIP e2e tests will be skipped (build it: bash scripts/livekit-tools.sh --sip)"
    return
  fi
  local missing=() pkg
  for pkg in libopus-dev libopusfile-dev libsoxr-dev pkg-config; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    # shellcheck source=lib/debian.sh
    . "$(dirname "$0")/lib/debian.sh"
    apt_install "${missing[@]}"
  fi
  build_sip
}

# build_sip: go build of livekit-sip in a scratch module (see the header for why not go install).
build_sip() {
  need_go "$SIP_MODULE"
  mkdir -p "$BIN_DIR"
  local scratch started
  scratch=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
  started=$(date +%s)
  log "building $SIP_MODULE/cmd/livekit-sip $SIP_VERSION (cgo; cached afterwards)"
  if ! (
    cd "$scratch" &&
      go mod init taskline.local/livekit-sip-build &&
      go get "$SIP_MODULE/cmd/livekit-sip@$SIP_VERSION" &&
      CGO_ENABLED=1 go build -o "$scratch/livekit-sip" "$SIP_MODULE/cmd/livekit-sip"
  ) >"$scratch/build.log" 2>&1; then
    cat "$scratch/build.log" >&2
    rm -rf "$scratch"
    die "could not build livekit-sip $SIP_VERSION (the commands were: go mod init; go get $SIP_MODULE/cmd/livekit-sip@$SIP_VERSION; go build $SIP_MODULE/cmd/livekit-sip)"
  fi
  mv "$scratch/livekit-sip" "$SIP_BIN"
  rm -rf "$scratch"
  log "built $SIP_BIN in $(($(date +%s) - started)) s"
}

IF_POSSIBLE=0
main() {
  local want_sip=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --sip) want_sip=1 ;;
      --if-possible) IF_POSSIBLE=1 ;;
      --path)
        case "${2:-}" in
          server) [ -x "$SERVER_BIN" ] && echo "$SERVER_BIN" ;;
          sip) [ -x "$SIP_BIN" ] && echo "$SIP_BIN" ;;
          *) die "--path takes server or sip" ;;
        esac
        return
        ;;
      -h | --help)
        sed -n '2,20p' "$0"
        return
        ;;
      *) die "unknown argument: $1 (use [--sip] [--if-possible] or --path server|sip)" ;;
    esac
    shift
  done
  server
  if [ "$want_sip" = 1 ]; then sip; fi
}

main "$@"
