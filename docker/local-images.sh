#!/usr/bin/env bash
# Images for hosts that cannot pull from a container registry.
#
# For each image ticketd's Docker files use (MySQL for the backends, Node for ticketd), it prints an
# `export` line: the official image when this engine has it or can pull it, otherwise a stand-in
# built here from Debian packages:
#   TICKETD_MYSQL_IMAGE  mysql:8.4, or Oracle MySQL 9.7 (Debian unstable's mysql-server-core, from
#                        the root file system test/support/mysql-root.sh prepares) behind an
#                        entrypoint that honours the official image's (MYSQL_ROOT_PASSWORD,
#                        MYSQL_DATABASE, MYSQL_USER/MYSQL_PASSWORD, /docker-entrypoint-initdb.d,
#                        /etc/mysql/conf.d); the MariaDB stand-in where that root cannot be made
#   TICKETD_MARIADB_IMAGE  MariaDB 10.11 behind the same entrypoint (the suite runs its Docker
#                        tests on both engines)
#   TICKETD_NODE_IMAGE   node:20-slim, or this host's Node (≥ 20.19) and npm on Debian 12
# Use:  eval "$(docker/local-images.sh)" && docker-compose -f docker/compose.yml up --build
#
# Stand-ins are tagged ticketd-local/…:<content hash>, never with an official name, and kept as
# `docker save` archives in ${TICKETD_IMAGE_CACHE:-~/.cache/ticketd/images}, so an engine with a fresh
# data folder loads them in seconds instead of building them again. Progress goes to stderr.
set -euo pipefail

MYSQL_OFFICIAL=${TICKETD_MYSQL_OFFICIAL:-mysql:8.4}
NODE_OFFICIAL=${TICKETD_NODE_OFFICIAL:-node:20-slim}
CACHE=${TICKETD_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ticketd/images}
SUITE=bookworm

say() { echo "local-images: $*" >&2; }
fail() { say "$*"; exit 1; }

command -v docker >/dev/null || fail "no docker client on PATH"
docker info >/dev/null 2>&1 || fail "no Docker engine answers (DOCKER_HOST=${DOCKER_HOST:-unset})"

# The official image, if this engine has it or a registry gives it within a short time.
official() {
  docker image inspect "$1" >/dev/null 2>&1 && return 0
  timeout 120 docker pull -q "$1" >/dev/null 2>&1
}

# The Debian mirror apt already uses here (deb822 sources first, then the classic list).
mirror() {
  local uri
  uri=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1 || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# A stand-in tagged by the hash of everything it is made from; loaded from the cache or built by $2.
standin() {
  local tag=$1 build=$2 archive
  archive="$CACHE/$(echo "$tag" | tr '/:' '__').tar"
  if docker image inspect "$tag" >/dev/null 2>&1; then return 0; fi
  if [ -s "$archive" ] && docker load -q -i "$archive" >/dev/null 2>&1 && docker image inspect "$tag" >/dev/null 2>&1; then
    say "loaded $tag from $archive"
    return 0
  fi
  say "building $tag"
  "$build" "$tag"
  mkdir -p "$CACHE"
  docker save -o "$archive.part" "$tag" && mv "$archive.part" "$archive"
}

# The Debian base of both stand-ins: built when one of them must be, never cached on its own.
base() {
  docker image inspect "$BASE_TAG" >/dev/null 2>&1 || { say "building $BASE_TAG"; build_base "$BASE_TAG"; }
}

SELF_HASH=$(sha256sum "$0" | cut -c1-12)
MIRROR=$(mirror)
BASE_TAG="ticketd-local/debian:$SUITE-$(echo "$SELF_HASH $MIRROR" | sha256sum | cut -c1-12)"

build_base() {
  command -v debootstrap >/dev/null || fail "no debootstrap on PATH (apt-get install debootstrap)"
  local root
  root=$(mktemp -d)
  # minbase: dpkg, apt and the essential packages, nothing else (~200 MB, ~40 s).
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >/dev/null || { rm -rf "$root"; fail "debootstrap $SUITE from $MIRROR failed"; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | docker import - "$1" >/dev/null
  rm -rf "$root"
}

# The stand-ins' entrypoint, which honours the official MySQL image's contract (MYSQL_ROOT_PASSWORD
# or MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_DATABASE, MYSQL_USER/MYSQL_PASSWORD, /docker-entrypoint-initdb.d),
# written to $1 for an engine: its server ($2), client ($3), admin tool ($4), and the command that
# initialises an empty data directory ($5).
write_entrypoint() {
  {
    printf '#!/bin/bash\n# %s behind the official MySQL image'"'"'s entrypoint contract (a stand-in: see docker/local-images.sh).\n' "$2"
    printf 'server=%s client=%s admin=%s\ninit_datadir() { %s; }\n' "$2" "$3" "$4" "$5"
    cat <<'BODY'
set -euo pipefail
if [ "${1:0:1}" = '-' ]; then set -- mysqld "$@"; fi
if [ "$1" != mysqld ] && [ "$1" != "$server" ]; then exec "$@"; fi
shift
# Debian's own option files bind 127.0.0.1; a container is reached from its network.
args=(--user=mysql --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock --bind-address=0.0.0.0 --port=3306 "$@")
local_socket=(--protocol=socket --socket=/run/mysqld/mysqld.sock -uroot)
sql() { "$client" "${local_socket[@]}" ${root_pw:+-p"$root_pw"} "$@"; }
if [ ! -d /var/lib/mysql/mysql ]; then
  if [ -z "${MYSQL_ROOT_PASSWORD:-}" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ]; then
    echo 'error: database is uninitialized and MYSQL_ROOT_PASSWORD is not set (or set MYSQL_ALLOW_EMPTY_PASSWORD)' >&2
    exit 1
  fi
  init_datadir
  "$server" "${args[@]}" --skip-networking &
  pid=$!
  for _ in $(seq 120); do "$admin" "${local_socket[@]}" ping >/dev/null 2>&1 && break; sleep 0.5; done
  root_pw=
  pw=${MYSQL_ROOT_PASSWORD:-}
  sql <<SQL
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${pw}';
GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
ALTER USER 'root'@'localhost' IDENTIFIED BY '${pw}';
FLUSH PRIVILEGES;
SQL
  root_pw=$pw
  if [ -n "${MYSQL_DATABASE:-}" ]; then sql -e "CREATE DATABASE IF NOT EXISTS \`${MYSQL_DATABASE}\`"; fi
  if [ -n "${MYSQL_USER:-}" ] && [ -n "${MYSQL_PASSWORD:-}" ]; then
    sql -e "CREATE USER '${MYSQL_USER}'@'%' IDENTIFIED BY '${MYSQL_PASSWORD}'"
    if [ -n "${MYSQL_DATABASE:-}" ]; then sql -e "GRANT ALL ON \`${MYSQL_DATABASE}\`.* TO '${MYSQL_USER}'@'%'"; fi
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "entrypoint: running $f"; . "$f" ;;
      *.sql) echo "entrypoint: running $f"; sql ${MYSQL_DATABASE:+"$MYSQL_DATABASE"} <"$f" ;;
      *.sql.gz) echo "entrypoint: running $f"; gunzip -c "$f" | sql ${MYSQL_DATABASE:+"$MYSQL_DATABASE"} ;;
    esac
  done
  "$admin" "${local_socket[@]}" ${root_pw:+-p"$root_pw"} shutdown
  wait "$pid" || true
  echo 'entrypoint: init process done; ready for start up'
fi
exec "$server" "${args[@]}"
BODY
  } >"$1"
  chmod +x "$1"
}

build_mysql() {
  base
  local ctx
  ctx=$(mktemp -d)
  cat >"$ctx/Dockerfile" <<EOF
FROM $BASE_TAG
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client \
 && rm -rf /var/lib/apt/lists/* /var/lib/mysql/* && mkdir -p /docker-entrypoint-initdb.d /run/mysqld && chown mysql:mysql /run/mysqld /var/lib/mysql
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/mysql
EXPOSE 3306
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["mysqld"]
EOF
  write_entrypoint "$ctx/entrypoint.sh" mariadbd mariadb mariadb-admin 'mariadb-install-db --user=mysql --datadir=/var/lib/mysql --auth-root-authentication-method=normal --skip-test-db >/dev/null'
  docker build -q -t "$1" "$ctx" >/dev/null || { rm -rf "$ctx"; fail "the MariaDB stand-in did not build"; }
  rm -rf "$ctx"
}

MYSQL_ROOT_SCRIPT="$(dirname "$0")/../test/support/mysql-root.sh"

# Oracle MySQL from the root file system of Debian unstable's mysql-server-core (never installed
# into this machine): imported whole, behind the same entrypoint contract as the official image.
build_mysql_real() {
  local root=$1 tag=$2 ctx base_tag
  base_tag="${tag/mysql:/mysql-root:}"
  say "importing $root as $base_tag"
  tar -C "$root" --exclude=./var/cache/apt --exclude=./var/lib/apt/lists -c . | docker import - "$base_tag" >/dev/null
  ctx=$(mktemp -d)
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $base_tag
RUN (getent group mysql || groupadd -r mysql) && (getent passwd mysql || useradd -r -g mysql -s /usr/sbin/nologin mysql) \
 && mkdir -p /var/lib/mysql /var/lib/mysql-files /run/mysqld /etc/mysql/conf.d /docker-entrypoint-initdb.d \
 && chown mysql:mysql /var/lib/mysql /var/lib/mysql-files /run/mysqld \
 && printf '[mysqld]\n!includedir /etc/mysql/conf.d/\n' > /etc/mysql/my.cnf
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/mysql
EXPOSE 3306
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["mysqld"]
DOCKERFILE
  write_entrypoint "$ctx/entrypoint.sh" mysqld mysql mysqladmin 'mysqld --initialize-insecure --user=mysql --datadir=/var/lib/mysql'
  docker build -q -t "$tag" "$ctx" >/dev/null || { rm -rf "$ctx"; fail "the MySQL stand-in did not build"; }
  docker rmi "$base_tag" >/dev/null 2>&1 || true
  rm -rf "$ctx"
}

NODE_BIN=$(command -v node || true)
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm || echo /nonexistent)")")" 2>/dev/null || true)

build_node() {
  [ -x "$NODE_BIN" ] || fail "no node on PATH to build the Node stand-in from"
  [ -f "$NPM_DIR/package.json" ] || fail "npm's own folder was not found next to $(command -v npm)"
  "$NODE_BIN" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
    || fail "this host's Node $("$NODE_BIN" --version) is older than 20.19, which ticketd needs"
  base
  local ctx ca
  ctx=$(mktemp -d)
  cp "$NODE_BIN" "$ctx/node"
  cp -r "$NPM_DIR" "$ctx/npm"
  # npm inside a build must trust what this host's npm trusts (a TLS-inspecting proxy's CA, say).
  ca=$(npm config get cafile 2>/dev/null || true)
  [ -f "$ca" ] || ca=${NODE_EXTRA_CA_CERTS:-}
  [ -f "$ca" ] || ca=/etc/ssl/certs/ca-certificates.crt
  cp "$ca" "$ctx/ca.crt"
  cat >"$ctx/Dockerfile" <<EOF
FROM $BASE_TAG
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libstdc++6 ca-certificates \
 && rm -rf /var/lib/apt/lists/* && groupadd -g 1000 node && useradd -u 1000 -g node -m -s /bin/bash node
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca.crt /usr/local/share/ticketd-ca.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ticketd-ca.crt npm_config_cafile=/usr/local/share/ticketd-ca.crt
CMD ["node"]
EOF
  docker build -q -t "$1" "$ctx" >/dev/null || { rm -rf "$ctx"; fail "the Node stand-in did not build"; }
  rm -rf "$ctx"
}

mariadb_tag="ticketd-local/mariadb:10.11-$(echo "$BASE_TAG" | sha256sum | cut -c1-12)"
standin "$mariadb_tag" build_mysql
echo "export TICKETD_MARIADB_IMAGE=$mariadb_tag"

if official "$MYSQL_OFFICIAL"; then
  echo "export TICKETD_MYSQL_IMAGE=$MYSQL_OFFICIAL"
elif mysql_root=$(bash "$MYSQL_ROOT_SCRIPT" 2>/dev/null) && [ -x "$mysql_root/usr/sbin/mysqld" ]; then
  version=$(awk '/^Package: mysql-server-core$/ { p = 1 } p && /^Version: / { print $2; exit }' "$mysql_root/var/lib/dpkg/status")
  tag="ticketd-local/mysql:${version%%-*}-$( (echo "$SELF_HASH"; echo "$version") | sha256sum | cut -c1-12)"
  build_real() { build_mysql_real "$mysql_root" "$1"; }
  standin "$tag" build_real
  echo "export TICKETD_MYSQL_IMAGE=$tag"
else
  say "no root file system of Oracle MySQL ($MYSQL_ROOT_SCRIPT failed): TICKETD_MYSQL_IMAGE is the MariaDB stand-in"
  echo "export TICKETD_MYSQL_IMAGE=$mariadb_tag"
fi

if official "$NODE_OFFICIAL"; then
  echo "export TICKETD_NODE_IMAGE=$NODE_OFFICIAL"
else
  [ -x "$NODE_BIN" ] || fail "no node on PATH to build the Node stand-in from, and $NODE_OFFICIAL cannot be pulled"
  version=$("$NODE_BIN" --version)
  tag="ticketd-local/node:${version#v}-$( (echo "$BASE_TAG"; sha256sum "$NODE_BIN"; npm --version) | sha256sum | cut -c1-12)"
  standin "$tag" build_node
  echo "export TICKETD_NODE_IMAGE=$tag"
fi
