#!/usr/bin/env bash
# Prepares the local PostgreSQL and MariaDB servers for Debezium, so that a fresh machine passes
# the CDC tests: installs them where missing, turns on PostgreSQL's logical decoding (wal_level
# = logical, replication connections from loopback) and MariaDB's ROW binlog, and (re)starts a
# server only when its configuration changed or it is not running. Safe to run again and again.
set -euo pipefail

log() { echo "[setup-databases] $*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

install_if_missing() {
  local command=$1 package=$2
  if ! command -v "$command" >/dev/null 2>&1; then
    log "installing $package"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$package"
  fi
}

wait_for() {
  local what=$1
  shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  log "$what did not come up"
  return 1
}

setup_postgres() {
  install_if_missing pg_ctlcluster postgresql
  local version conf hba restart=no
  version=$(ls /etc/postgresql | sort -n | tail -1)
  conf=/etc/postgresql/$version/main/postgresql.conf
  hba=/etc/postgresql/$version/main/pg_hba.conf
  if ! grep -q '^# iceberg-cdc' "$conf"; then
    log "PostgreSQL $version: wal_level = logical"
    as_root tee -a "$conf" >/dev/null <<'CONF'
# iceberg-cdc: logical decoding for Debezium
wal_level = logical
max_wal_senders = 20
max_replication_slots = 20
CONF
    restart=yes
  fi
  if ! grep -q '^# iceberg-cdc' "$hba"; then
    log "PostgreSQL $version: replication connections from loopback"
    as_root tee -a "$hba" >/dev/null <<'CONF'
# iceberg-cdc: Debezium's replication connection
local replication all trust
host replication all 127.0.0.1/32 trust
CONF
    restart=yes
  fi
  if ! pg_ctlcluster --skip-systemctl-redirect "$version" main status >/dev/null 2>&1; then
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
  elif [ $restart = yes ]; then
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main restart
  fi
  wait_for PostgreSQL psql -h 127.0.0.1 -U postgres -Atc 'select 1'
  log "PostgreSQL wal_level: $(psql -h 127.0.0.1 -U postgres -Atc 'show wal_level')"
}

setup_mariadb() {
  install_if_missing mariadbd mariadb-server
  local cnf=/etc/mysql/my.cnf restart=no
  if ! grep -q '^# iceberg-cdc' "$cnf"; then
    log "MariaDB: ROW binlog"
    as_root tee -a "$cnf" >/dev/null <<'CONF'
# iceberg-cdc: a ROW binlog for Debezium
[mariadbd]
server_id = 1
log_bin = mysql-bin
binlog_format = ROW
binlog_row_image = FULL
expire_logs_days = 2
CONF
    restart=yes
  fi
  if mysqladmin -uroot status >/dev/null 2>&1; then
    if [ $restart = yes ]; then
      mysqladmin -uroot shutdown
      for _ in $(seq 1 60); do
        pgrep -x mariadbd >/dev/null || break
        sleep 1
      done
    fi
  fi
  if ! mysqladmin -uroot status >/dev/null 2>&1; then
    as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  fi
  wait_for MariaDB mysqladmin -uroot status
  log "MariaDB binlog: $(mysql -uroot -N -e "select concat(@@log_bin, ' ', @@binlog_format)")"
}

setup_postgres
setup_mariadb
# docker/flink/submit-job.sh, which the standalone-cluster test runs, waits for Flink with wget;
# DockerComposeITCase validates docker/compose.yaml with Debian's docker-compose.
install_if_missing wget wget
install_if_missing docker-compose docker-compose
