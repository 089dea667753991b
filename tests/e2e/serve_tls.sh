#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl serve over TLS, as a Prometheus exporter is deployed: a real
# Prometheus (Debian's) scrapes it (1) over TLS with basic authentication
# (a bcrypt hash from htpasswd -nbBC 10) and (2) with mutual TLS
# (RequireAndVerifyClientCert); the certificates are made here by openssl,
# a certificate authority and a rogue one. curl checks what Prometheus
# does not: a wrong password and no password get 401 with WWW-Authenticate,
# plain HTTP to the TLS port gets no HTTP answer, a client without a
# certificate or with the rogue authority's fails the handshake, the
# configured header is sent. Then: listening on 0.0.0.0 without TLS is
# refused before tracefs is touched, and an unsafe web configuration is
# refused naming its file and line. Needs root and tracefs (skips with 4,
# except in CI).
# Usage: serve_tls.sh BUILD_DIR [FIXTURE_DIR]
set -euo pipefail
build=$1
# shellcheck source=../lib/real_tracefs.sh
source "$(dirname "$0")/../lib/real_tracefs.sh"
real_tracefs "$build/kprobectl"
for tool in prometheus openssl htpasswd curl python3; do
  command -v $tool >/dev/null || skip "no $tool (scripts/setup installs it)"
done

dir=$(mktemp -d)
group=kptls$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$build/kprobectl" -q clean >/dev/null 2>&1 || true
  grep -q "^[pr]:$group/" $tracefs/uprobe_events 2>/dev/null && "$build/kprobectl" -q del "$group:*" || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$dir"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

# Certificates: an authority, the server's (for 127.0.0.1), a client's; a
# rogue authority and a client certificate it signed.
cd "$dir"
cert() {  # NAME CA USAGE [SAN]
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
  printf 'extendedKeyUsage=%s\n%s\n' "$3" "${4:+subjectAltName=$4}" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -days 2 -extfile "$1.ext" \
    -out "$1.crt" 2>/dev/null
}
for ca in ca rogue; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $ca.key -out $ca.crt -days 2 \
    -subj "/CN=kprobectl test $ca" 2>/dev/null
done
cert server ca serverAuth "IP:127.0.0.1,DNS:localhost"
cert renewed ca serverAuth "IP:127.0.0.1,DNS:localhost"
cert client ca clientAuth
cert intruder rogue clientAuth
password=kp-$$-secret
hash=$(htpasswd -nbBC 10 "" "$password" | tr -d ':\n')
password2=kp-$$-rotated
hash2=$(htpasswd -nbBC 10 "" "$password2" | tr -d ':\n')
cd - >/dev/null

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
kport=$(port)
pport=$(port)
types=${2:-$build/tests/fixtures}/types
cat >"$dir/kprobectl.conf" <<CONF
listen 127.0.0.1:$kport
web-config web.yml
probe -x $types $group:tick=tick i
hist $group:tick -k i.log2 --name ticks
CONF
cat >"$dir/web-auth.yml" <<CONF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
basic_auth_users:
  prometheus: $hash
CONF
cat >"$dir/web-mtls.yml" <<CONF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS12
CONF
cat >"$dir/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: auth
    scheme: https
    tls_config:
      ca_file: $dir/ca.crt
    basic_auth:
      username: prometheus
      password: $password
    static_configs:
      - targets: ['127.0.0.1:$kport']
  - job_name: mtls
    scheme: https
    tls_config:
      ca_file: $dir/ca.crt
      cert_file: $dir/client.crt
      key_file: $dir/client.key
    static_configs:
      - targets: ['127.0.0.1:$kport']
CONF

url=https://127.0.0.1:$kport/metrics
serve() {  # WEB_CONFIG CURL_ARGS...
  cp "$dir/$1" "$dir/web.yml"
  shift
  "$build/kprobectl" serve -c "$dir/kprobectl.conf" >>"$dir/serve.log" 2>&1 &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 100); do
    curl -sf --cacert "$dir/ca.crt" "$@" "$url" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "kprobectl serve did not answer over TLS"
}
stop() {
  kill -TERM "$serve_pid"
  wait "$serve_pid" || fail "serve exited with $? on SIGTERM"
  grep -q "$group" $tracefs/uprobe_events && fail "SIGTERM: the probe is still there"
  return 0
}
# HTTP status of a request (000: no HTTP answer at all).
status() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }
expect() {  # WHAT WANT GOT
  [ "$2" = "$3" ] || fail "$1: got '$3', not '$2'"
  echo "ok - $1: $3"
}
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$dir/prometheus.log" 2>&1 &
pids+=($!)
# shellcheck source=prometheus_query.sh
source "$(dirname "$0")/prometheus_query.sh"

# 1. TLS and basic authentication.
serve web-auth.yml -u "prometheus:$password"
"$types" 100 >/dev/null
query "kprobectl_probe_hits_total{job=\"auth\",event=\"$group:tick\"}" 100
query 'up{job="auth"}' 1
expect "wrong password" 401 "$(status --cacert "$dir/ca.crt" -u "prometheus:wrong" "$url")"
expect "unknown user" 401 "$(status --cacert "$dir/ca.crt" -u "nobody:$password" "$url")"
expect "no credentials" 401 "$(status --cacert "$dir/ca.crt" "$url")"
headers=$(curl -s -D - -o /dev/null --cacert "$dir/ca.crt" "$url")
grep -qi '^WWW-Authenticate: Basic realm="kprobectl"' <<<"$headers" || fail "401 without WWW-Authenticate: $headers"
echo "ok - 401 says WWW-Authenticate: Basic"
headers=$(curl -s -D - -o /dev/null --cacert "$dir/ca.crt" -u "prometheus:$password" "$url")
grep -qi '^X-Content-Type-Options: nosniff' <<<"$headers" || fail "the configured header is missing: $headers"
echo "ok - the configured header is sent"
expect "plain HTTP to the TLS port" 000 "$(status "http://127.0.0.1:$kport/metrics")"
expect "an unknown authority (curl checks the server)" 000 "$(status --cacert "$dir/rogue.crt" -u "prometheus:$password" "$url")"

# Read again when it changes, without a restart: a renewed certificate,
# a new password; a broken file is refused and the running one kept.
served_cert() {
  openssl s_client -connect "127.0.0.1:$kport" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256
}
fingerprint() { openssl x509 -noout -fingerprint -sha256 -in "$dir/$1.crt"; }
until_true() {  # WHAT COMMAND...: within 5 s
  local what=$1
  shift
  for _ in $(seq 50); do "$@" && { echo "ok - $what"; return 0; }; sleep 0.1; done
  fail "$what: not within 5 s"
}
[ "$(served_cert)" = "$(fingerprint server)" ] || fail "the served certificate is not server.crt"
cp "$dir/renewed.key" "$dir/server.key.new"
cp "$dir/renewed.crt" "$dir/server.crt.new"
mv "$dir/server.key.new" "$dir/server.key"
mv "$dir/server.crt.new" "$dir/server.crt"
renewed() { [ "$(served_cert)" = "$(fingerprint renewed)" ]; }
until_true "a renewed certificate served without a restart" renewed
sleep 2  # Prometheus scrapes every second, now the renewed certificate's connections
query 'up{job="auth"}' 1
sed "s|$hash|$hash2|" "$dir/web-auth.yml" >"$dir/web.yml.new"
mv "$dir/web.yml.new" "$dir/web.yml"
rotated() { [ "$(status --cacert "$dir/ca.crt" -u "prometheus:$password2" "$url")" = 200 ]; }
until_true "a new password taken without a restart" rotated
expect "the old password, after" 401 "$(status --cacert "$dir/ca.crt" -u "prometheus:$password" "$url")"
printf 'tls_server_config:\n  cert_file: server.crt\n  bogus: 1\n' >"$dir/web.yml.new"
mv "$dir/web.yml.new" "$dir/web.yml"
refused() { grep -q "the web configuration changed: reload refused, the running configuration kept: .*bogus" "$dir/serve.log"; }
until_true "a broken web configuration refused, said in the log" refused
expect "the running one kept" 200 "$(status --cacert "$dir/ca.crt" -u "prometheus:$password2" "$url")"
curl -sf --cacert "$dir/ca.crt" -u "prometheus:$password2" "$url" | grep -qx 'kprobectl_config_last_reload_successful 0' ||
  fail "kprobectl_config_last_reload_successful is not 0"
echo "ok - kprobectl_config_last_reload_successful 0"
stop
echo "ok - TLS and basic auth: SIGTERM left nothing"

# 2. Mutual TLS.
serve web-mtls.yml --cert "$dir/client.crt" --key "$dir/client.key"
"$types" 7 >/dev/null
query "kprobectl_probe_hits_total{job=\"mtls\",event=\"$group:tick\"}" 7
query 'up{job="mtls"}' 1
# Refused in the handshake: over TLS 1.2, where the client waits for the
# server's Finished, curl says 35 (an empty HTTP reply, 52, would be the
# per-request check's). Over TLS 1.3 the client's handshake ends before the
# server has read its certificate, so curl sees the closed connection as it
# sends its request: no HTTP answer (000) is all there is to check.
in_handshake() {  # WHAT CURL_ARGS...
  local what=$1 code=0
  shift
  curl -s -o /dev/null --max-time 5 --tls-max 1.2 --cacert "$dir/ca.crt" "$@" "$url" 2>/dev/null || code=$?
  [ $code = 35 ] || fail "$what: curl exit $code, not 35 (the handshake refused)"
  echo "ok - $what: the TLS 1.2 handshake refused (curl 35)"
}
in_handshake "no client certificate"
in_handshake "a client certificate of another authority" --cert "$dir/intruder.crt" --key "$dir/intruder.key"
in_handshake "the server's own certificate as a client's (not for client auth)" \
  --cert "$dir/server.crt" --key "$dir/server.key"
expect "no client certificate, TLS 1.3" 000 "$(status --cacert "$dir/ca.crt" "$url")"
expect "a client certificate of another authority, TLS 1.3" 000 \
  "$(status --cacert "$dir/ca.crt" --cert "$dir/intruder.crt" --key "$dir/intruder.key" "$url")"
expect "the client's certificate" 200 \
  "$(status --cacert "$dir/ca.crt" --cert "$dir/client.crt" --key "$dir/client.key" "$url")"
stop
echo "ok - mutual TLS: SIGTERM left nothing"

# 3. Refused before anything is written.
printf 'listen 0.0.0.0:%s\nprobe -x %s %s:tick=tick i\n' "$kport" "$types" "$group" >"$dir/open.conf"
if "$build/kprobectl" serve -c "$dir/open.conf" >"$dir/open.log" 2>&1; then fail "0.0.0.0 without TLS was served"; fi
grep -q "^kprobectl: error: serve would listen on 0.0.0.0, beyond this machine, with neither TLS nor authentication" \
  "$dir/open.log" || fail "0.0.0.0 without TLS: $(cat "$dir/open.log")"
grep -q "$group" $tracefs/uprobe_events && fail "0.0.0.0 refused, yet a probe was added"
echo "ok - 0.0.0.0 without TLS or authentication refused, nothing added"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAnyClientCert\n' \
  >"$dir/web.yml"
if "$build/kprobectl" serve -c "$dir/kprobectl.conf" >"$dir/unsafe.log" 2>&1; then fail "an unsafe web config was served"; fi
grep -q "^kprobectl: error: $dir/web.yml:4: client_auth_type RequireAnyClientCert is refused as unsafe" \
  "$dir/unsafe.log" || fail "unsafe web config: $(cat "$dir/unsafe.log")"
echo "ok - RequireAnyClientCert refused, naming the file and line"
