#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl serve scraped by a real Prometheus (Debian's prometheus), on
# this machine's uprobes: a probe on the types fixture's tick(i), its hits
# and a log2 histogram of i by comm, served; Prometheus scrapes every
# second; after `types 100` its query API must return 100 hits, a
# histogram _count of 100, _sum 4950 (0 + ... + 99) and le="8" holding
# i = 0..8 (9). Then: SIGKILL leaves the probe, which `clean` removes and
# a restart of serve replaces (never another's probe: one added by hand
# stays), and SIGTERM removes everything. Needs root and tracefs (skips with 4, except in CI).
# Usage: serve_prometheus.sh BUILD_DIR [FIXTURE_DIR]
set -euo pipefail
build=$1
# shellcheck source=../../scripts/lib/tracefs.sh
source "$(dirname "$0")/../../scripts/lib/tracefs.sh"
tracefs=$(tracefs_dir "$build/kprobectl")
skip() { [ "${CI:-}" = true ] && { echo "must run in CI: $1" >&2; exit 1; }; echo "SKIPPED: $1" >&2; exit 4; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -n "$tracefs" ] && [ -w "$tracefs/uprobe_events" ] || skip "no writable uprobe_events in tracefs (${tracefs:-not mounted})"
command -v prometheus >/dev/null || skip "no prometheus (apt-get install prometheus)"

dir=$(mktemp -d)
group=kpsrv$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$build/kprobectl" -q clean >/dev/null 2>&1 || true
  echo "-:kpother$$/tick" >>$tracefs/uprobe_events 2>/dev/null || true
  grep -q "^[pr]:$group/" $tracefs/uprobe_events 2>/dev/null && "$build/kprobectl" -q del "$group:*" || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$dir"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

# Free ports, as the kernel hands them out.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
kport=$(port)
pport=$(port)
types=${2:-$build/tests/fixtures}/types
cat >"$dir/kprobectl.conf" <<CONF
listen 127.0.0.1:$kport
probe -x $types $group:tick=tick i
hist $group:tick -k comm,i.log2 --name ticks
CONF
cat >"$dir/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kprobectl
    static_configs:
      - targets: ['127.0.0.1:$kport']
CONF

serve() {
  "$build/kprobectl" serve -c "$dir/kprobectl.conf" >>"$dir/serve.log" 2>&1 &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$kport/metrics" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "kprobectl serve did not answer"
}
serve
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$dir/prometheus.log" 2>&1 &
pids+=($!)

"$types" 100 >/dev/null
# The value of a PromQL query, once Prometheus has it (a scrape a second).
query() {
  for _ in $(seq 150); do
    value=$(curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' \
        2>/dev/null || true)
    [ "$value" = "$2" ] && { echo "ok - $1 = $value"; return 0; }
    sleep 0.2
  done
  fail "$1: Prometheus says '${value:-nothing}', not $2"
}
query "kprobectl_probe_hits_total{event=\"$group:tick\"}" 100
query 'kprobectl_ticks_i_count{comm="types"}' 100
query 'kprobectl_ticks_i_sum{comm="types"}' 4950
query 'kprobectl_ticks_i_bucket{comm="types",le="8"}' 9
query 'kprobectl_ticks_i_bucket{comm="types",le="+Inf"}' 100
query 'up{job="kprobectl"}' 1

# Killed, it leaves its probe; a probe of another's (by hand) is there too.
"$build/kprobectl" -q -x "$types" -D "kpother$$:tick=tick" >>$tracefs/uprobe_events
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
grep -q "^p:$group/tick " $tracefs/uprobe_events || fail "SIGKILL: the probe should still be there"
"$build/kprobectl" clean >"$dir/clean.log" 2>&1 || fail "clean failed"
grep -q "$group" $tracefs/uprobe_events && fail "clean: the killed serve's probe is still there"
[ -z "$(ls $tracefs/instances | grep '^kprobectl-')" ] || fail "clean: an instance is left"
grep -q "^p:kpother$$/tick " $tracefs/uprobe_events || fail "clean removed another's probe"
echo "ok - clean after SIGKILL: the killed serve's probe and instance removed, another's kept"
serve
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
serve
grep -c "^p:$group/tick " $tracefs/uprobe_events | grep -qx 1 || fail "restarted: the old probe was not replaced"
grep -q "^p:kpother$$/tick " $tracefs/uprobe_events || fail "restarted: another's probe was removed"
echo "ok - restarted after SIGKILL: its own probe replaced, another's kept"
"$types" 10 >/dev/null
query "kprobectl_probe_hits_total{event=\"$group:tick\"}" 10
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve exited with $? on SIGTERM"
echo "-:kpother$$/tick" >>$tracefs/uprobe_events
grep -q "$group" $tracefs/uprobe_events && fail "SIGTERM: the probe is still there"
[ -z "$(ls $tracefs/instances | grep '^kprobectl-')" ] || fail "SIGTERM: an instance is left"
echo "ok - SIGTERM: nothing left"
