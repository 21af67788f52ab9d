#!/usr/bin/env bash
# Makes the services taskline's tests need reachable on loopback, on a fresh Debian machine:
#   PostgreSQL on 127.0.0.1:5432 (trust auth, user postgres, database "test")
#   NATS with JetStream on 127.0.0.1:4222 (only with --nats)
#   Redis on 127.0.0.1:6379 (only with --redis: livekit-sip and the LiveKit server it works
#   with talk through it, for the SIP e2e tests)
#
# Usage:
#   scripts/ci-services.sh [--nats] [--redis]
#                                     start whatever is not already answering (idempotent)
#   scripts/ci-services.sh [--nats] [--redis] --if-possible
#                                     the same, but never installs packages and never fails:
#                                     what cannot start is reported and left to the tests,
#                                     which skip (or fail under CI=true) what they need (npm test)
#   scripts/ci-services.sh --redis --no-postgres
#                                     only Redis (the LiveKit e2e suite: scripts/e2e-livekit.sh)
#   scripts/ci-services.sh stop       stop only what this script started (PIDs in the state dir)
#
# A service that already answers is left alone. Missing packages are installed with apt-get
# (as root, or through passwordless sudo), except with --if-possible. Servers this script starts
# keep their data, logs and PID files
# in $TASKLINE_CI_STATE (default ${TMPDIR:-/tmp}/taskline-ci-services).
# TASKLINE_CI_PG_PORT / TASKLINE_CI_NATS_PORT / TASKLINE_CI_REDIS_PORT override the ports (for
# trying the script out).
set -euo pipefail

STATE_DIR="${TASKLINE_CI_STATE:-${TMPDIR:-/tmp}/taskline-ci-services}"
PG_PORT="${TASKLINE_CI_PG_PORT:-5432}"
NATS_PORT="${TASKLINE_CI_NATS_PORT:-4222}"
REDIS_PORT="${TASKLINE_CI_REDIS_PORT:-6379}"
HOST=127.0.0.1
PG_PIDFILE="$STATE_DIR/postgres.pid"
NATS_PIDFILE="$STATE_DIR/nats-server.pid"
REDIS_PIDFILE="$STATE_DIR/redis-server.pid"

log() { printf '[ci-services] %s\n' "$*"; }
die() {
  printf '[ci-services] error: %s\n' "$*" >&2
  exit 1
}

# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"

# Installs Debian packages, unless --if-possible (which installs nothing).
install_packages() {
  if [ "$IF_POSSIBLE" = 1 ]; then
    die "$* is not installed (--if-possible installs nothing; run scripts/ci-services.sh without it as root, or install it)"
  fi
  apt_install "$@"
}

# Runs a command as the postgres OS user when we are root (initdb refuses root), else as us.
as_pg_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

tcp_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# Directory holding initdb and pg_ctl: Debian's newest /usr/lib/postgresql/N/bin, else PATH's.
pg_bindir() {
  local ctl
  ctl=$(ls -1d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$ctl" ] && command -v pg_ctl >/dev/null 2>&1; then
    ctl=$(readlink -f "$(command -v pg_ctl)")
  fi
  [ -n "$ctl" ] && dirname "$ctl"
}

# A client tool (psql, createdb) from the server's bin directory, else from PATH.
pg_tool() {
  if [ -x "$1/$2" ]; then echo "$1/$2"; else command -v "$2" || die "$2 not found"; fi
}

start_postgres() {
  if pg_isready -q -h "$HOST" -p "$PG_PORT" 2>/dev/null; then
    log "postgres: already accepting connections on $HOST:$PG_PORT; nothing to do"
    return
  fi
  local bin
  bin=$(pg_bindir || true)
  if [ -z "$bin" ]; then
    if ! dpkg -s postgresql-common >/dev/null 2>&1 && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
      # Keep the package from creating (and starting) its own password-auth cluster on 5432.
      as_root mkdir -p /etc/postgresql-common
      echo 'create_main_cluster = off' | as_root tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    install_packages postgresql
    bin=$(pg_bindir || true)
    [ -n "$bin" ] || die "postgresql installed but pg_ctl was not found under /usr/lib/postgresql"
    if pg_isready -q -h "$HOST" -p "$PG_PORT" 2>/dev/null; then
      log "postgres: the package started its own cluster on $HOST:$PG_PORT; leaving it as is"
      return
    fi
  fi

  local dir="$STATE_DIR/postgres"
  local data="$dir/data"
  mkdir -p "$dir"
  chmod 755 "$STATE_DIR" 2>/dev/null || true
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$dir"; fi
  if [ ! -s "$data/PG_VERSION" ]; then
    log "postgres: creating a trust-auth cluster in $data"
    as_pg_user "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log"
  fi
  log "postgres: starting $bin/postgres on $HOST:$PG_PORT"
  as_pg_user "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=$HOST -p $PG_PORT -c unix_socket_directories='$dir'" >/dev/null ||
    die "postgres did not start; see $dir/server.log"
  head -n 1 "$data/postmaster.pid" >"$PG_PIDFILE"
  log "postgres: running as PID $(cat "$PG_PIDFILE") (recorded in $PG_PIDFILE)"
  if [ "$("$(pg_tool "$bin" psql)" -h "$HOST" -p "$PG_PORT" -U postgres -Atc \
    "SELECT 1 FROM pg_database WHERE datname = 'test'")" != 1 ]; then
    "$(pg_tool "$bin" createdb)" -h "$HOST" -p "$PG_PORT" -U postgres test
    log "postgres: created database test"
  fi
}

stop_postgres() {
  local pid
  pid=$(cat "$PG_PIDFILE" 2>/dev/null || true)
  if [ -z "$pid" ]; then
    log "postgres: not started by this script; leaving it alone"
    return
  fi
  local data="$STATE_DIR/postgres/data"
  if pid_alive "$pid" && [ "$(head -n 1 "$data/postmaster.pid" 2>/dev/null)" = "$pid" ]; then
    local bin
    bin=$(pg_bindir) || die "pg_ctl not found; stop PID $pid by hand"
    as_pg_user "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    log "postgres: stopped PID $pid"
  else
    log "postgres: PID $pid is no longer running"
  fi
  rm -f "$PG_PIDFILE"
}

start_nats() {
  if tcp_open "$NATS_PORT"; then
    log "nats: already listening on $HOST:$NATS_PORT; nothing to do"
    return
  fi
  if ! command -v nats-server >/dev/null 2>&1; then
    install_packages nats-server
    if tcp_open "$NATS_PORT"; then
      log "nats: the package started its own service on $HOST:$NATS_PORT; leaving it as is"
      return
    fi
  fi
  local dir="$STATE_DIR/nats"
  mkdir -p "$dir/jetstream"
  log "nats: starting nats-server with JetStream on $HOST:$NATS_PORT (store $dir/jetstream)"
  setsid nats-server -a "$HOST" -p "$NATS_PORT" -js -sd "$dir/jetstream" -l "$dir/server.log" \
    </dev/null >/dev/null 2>&1 &
  local pid=$!
  echo "$pid" >"$NATS_PIDFILE"
  local waited=0
  until tcp_open "$NATS_PORT"; do
    pid_alive "$pid" || die "nats-server exited; see $dir/server.log"
    [ "$waited" -lt 100 ] || die "nats-server did not listen within 10 s; see $dir/server.log"
    sleep 0.1
    waited=$((waited + 1))
  done
  log "nats: running as PID $pid (recorded in $NATS_PIDFILE)"
}

stop_nats() {
  local pid
  pid=$(cat "$NATS_PIDFILE" 2>/dev/null || true)
  if [ -z "$pid" ]; then
    log "nats: not started by this script; leaving it alone"
    return
  fi
  if pid_alive "$pid" && grep -q nats-server "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid"
    local waited=0
    while pid_alive "$pid" && [ "$waited" -lt 100 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    log "nats: stopped PID $pid"
  else
    log "nats: PID $pid is no longer running"
  fi
  rm -f "$NATS_PIDFILE"
}

# Answers PONG when a Redis listens on REDIS_PORT.
redis_answers() {
  local reply
  reply=$({ exec 3<>"/dev/tcp/$HOST/$REDIS_PORT" && printf 'PING\r\n' >&3 && timeout 2 head -c 7 <&3; } 2>/dev/null) || return 1
  [ "${reply%$'\r'*}" = "+PONG" ]
}

start_redis() {
  if redis_answers; then
    log "redis: already answering on $HOST:$REDIS_PORT; nothing to do"
    return
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    install_packages redis-server
    if redis_answers; then
      log "redis: the package started its own service on $HOST:$REDIS_PORT; leaving it as is"
      return
    fi
  fi
  local dir="$STATE_DIR/redis"
  mkdir -p "$dir"
  log "redis: starting redis-server on $HOST:$REDIS_PORT (no persistence)"
  setsid redis-server --bind "$HOST" --port "$REDIS_PORT" --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/server.log" --daemonize no </dev/null >/dev/null 2>&1 &
  local pid=$!
  echo "$pid" >"$REDIS_PIDFILE"
  local waited=0
  until redis_answers; do
    pid_alive "$pid" || die "redis-server exited; see $dir/server.log"
    [ "$waited" -lt 100 ] || die "redis-server did not answer within 10 s; see $dir/server.log"
    sleep 0.1
    waited=$((waited + 1))
  done
  log "redis: running as PID $pid (recorded in $REDIS_PIDFILE)"
}

stop_redis() {
  local pid
  pid=$(cat "$REDIS_PIDFILE" 2>/dev/null || true)
  if [ -z "$pid" ]; then
    log "redis: not started by this script; leaving it alone"
    return
  fi
  if pid_alive "$pid" && grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid"
    local waited=0
    while pid_alive "$pid" && [ "$waited" -lt 100 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    log "redis: stopped PID $pid"
  else
    log "redis: PID $pid is no longer running"
  fi
  rm -f "$REDIS_PIDFILE"
}

IF_POSSIBLE=0

main() {
  local action=start nats=0 redis=0 postgres=1
  for arg in "$@"; do
    case "$arg" in
      stop) action=stop ;;
      start) action=start ;;
      --nats) nats=1 ;;
      --redis) redis=1 ;;
      --no-postgres) postgres=0 ;;
      --if-possible) IF_POSSIBLE=1 ;;
      -h | --help)
        sed -n '2,26p' "$0"
        return
        ;;
      *) die "unknown argument: $arg (use [start] [--nats] [--redis] [--no-postgres] [--if-possible] or stop)" ;;
    esac
  done
  mkdir -p "$STATE_DIR"
  if [ "$action" = stop ]; then
    stop_redis
    stop_nats
    stop_postgres
    return
  fi
  if [ "$IF_POSSIBLE" = 1 ]; then
    # Each service on its own: one that cannot start does not stop the other, or the run.
    if [ "$postgres" -eq 1 ]; then
      (start_postgres) || log "postgres: not started; suites that need it will say so"
    fi
    if [ "$nats" -eq 1 ]; then
      (start_nats) || log "nats: not started; suites that need it will say so"
    fi
    if [ "$redis" -eq 1 ]; then
      (start_redis) || log "redis: not started; suites that need it will say so"
    fi
    return 0
  fi
  if [ "$postgres" -eq 1 ]; then
    start_postgres
  fi
  if [ "$nats" -eq 1 ]; then
    start_nats
  fi
  if [ "$redis" -eq 1 ]; then
    start_redis
  fi
}

main "$@"
