#!/usr/bin/env bash
# PostgreSQL 15 server binaries for the state tests (state/pgtest starts a
# throwaway cluster with initdb + pg_ctl as the postgres OS user on a free
# loopback port; no system service is started or needed). Idempotent and
# quiet; run as root on a clean Debian 12 machine (CI=true) or once by hand.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && id postgres >/dev/null 2>&1; then
  exit 0
fi
apt-get update -qq
# The package's postinst creates the postgres user and a default cluster;
# policy-rc.d keeps it from starting a system server the tests do not use.
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
ls /usr/lib/postgresql/15/bin/initdb >/dev/null
