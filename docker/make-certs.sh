#!/usr/bin/env bash
# Certificates for docker/compose.tls.yml: a CA, one server certificate for mysql-a and mysql-b (the
# names ticketd connects to inside the compose network), and one for ticketd's HTTPS on localhost.
# Usage: docker/make-certs.sh [DIR]   (default docker/certs; made once, kept out of git)
set -euo pipefail
dir=${1:-"$(dirname "$0")/certs"}
mkdir -p "$dir"
# Mounted whole into containers whose servers run as other users: they must be able to enter it.
chmod 755 "$dir"
cd "$dir"
if [ -f ca.pem ] && [ -f mysql.pem ] && [ -f https.pem ]; then echo "certificates already in $dir"; exit 0; fi
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 365 -subj "/CN=ticketd demo CA" 2>/dev/null
sign() {
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
  printf 'subjectAltName=%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 365 -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
sign mysql mysql "DNS:mysql-a,DNS:mysql-b"
sign https localhost "DNS:localhost,IP:127.0.0.1"
# The MySQL and Node images run as other users than this one: the keys must be readable by them.
chmod 644 ./*.pem ./*.key
echo "certificates in $dir: ca.pem, mysql.pem/key (mysql-a, mysql-b), https.pem/key (localhost)"
