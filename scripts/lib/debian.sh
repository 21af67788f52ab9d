# Sourced by the repo's set-up scripts (ci-services.sh, speech-tools.sh, browser-tools.sh): run a
# command as root (or through passwordless sudo) and install Debian packages with apt-get. The
# sourcing script defines log() for its own prefix.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    log "error: need root (or passwordless sudo) to run: $*" >&2
    exit 1
  fi
}

# apt_install PKG... — refreshes the package lists and installs PKG without recommends.
apt_install() {
  log "installing $* with apt-get"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 \
    apt-get install -y -qq --no-install-recommends "$@"
}
