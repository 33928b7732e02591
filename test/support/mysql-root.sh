#!/usr/bin/env bash
# Prepares Oracle MySQL 9.7 where Debian 12 has none: Debian unstable's mysql-server-core and
# mysql-client-core in a root file system of their own (debootstrap), never in the machine itself.
# The launcher runs mysqld from that root (TICKETD_MYSQL_ROOT), and docker/local-images.sh makes a
# real-MySQL image of it. Prints the root's path. Safe to run again: a finished root is kept.
set -euo pipefail
root=${TICKETD_MYSQL_ROOT:-/var/cache/ticketd/mysql-root}
mirror=${TICKETD_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ -x "$root/usr/sbin/mysqld" ] && [ -f "$root/.ticketd-complete" ]; then
  echo "$root"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "mysql-root: debootstrap is missing (apt-get install debootstrap)" >&2
  exit 1
fi
partial="$root.partial"
rm -rf "$partial"
mkdir -p "$(dirname "$root")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! debootstrap --variant=minbase sid "$partial" "$mirror" >"$log" 2>&1; then
  echo "mysql-root: debootstrap of sid failed: $(tail -n 3 "$log" | tr '\n' ' ')" >&2
  exit 1
fi
cp /etc/resolv.conf "$partial/etc/resolv.conf" 2>/dev/null || true
# The mirror's sid Release file can be past its Valid-Until date; the packages are still signed.
if ! chroot "$partial" apt-get -qq -o Acquire::Check-Valid-Until=false update >"$log" 2>&1 ||
  ! chroot "$partial" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    mysql-server-core mysql-client-core openssl >"$log" 2>&1; then
  echo "mysql-root: installing mysql-server-core into $partial failed: $(tail -n 3 "$log" | tr '\n' ' ')" >&2
  exit 1
fi
chroot "$partial" apt-get clean
touch "$partial/.ticketd-complete"
rm -rf "$root"
mv "$partial" "$root"
echo "$root"
