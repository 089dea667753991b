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
# shellcheck source=../lib/real_tracefs.sh
source "$(dirname "$0")/../lib/real_tracefs.sh"
real_tracefs "$build/kprobectl"
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
probe -x $types $group:alone=tick
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
# shellcheck source=prometheus_query.sh
source "$(dirname "$0")/prometheus_query.sh"
query "kprobectl_probe_hits_total{event=\"$group:tick\"}" 100
query 'kprobectl_ticks_i_count{comm="types"}' 100
query 'kprobectl_ticks_i_sum{comm="types"}' 4950
query 'kprobectl_ticks_i_bucket{comm="types",le="8"}' 9
query 'kprobectl_ticks_i_bucket{comm="types",le="+Inf"}' 100
query 'up{job="kprobectl"}' 1
# A probe that no hist line uses counts its hits too.
query "kprobectl_probe_hits_total{event=\"$group:alone\"}" 100
# Its metrics about itself, as client libraries name them, and a landing page.
query 'kprobectl_build_info{job="kprobectl"}' 1
query 'kprobectl_scrape_errors_total{job="kprobectl"}' 0
query 'process_open_fds{job="kprobectl"} > bool 3' 1
query 'process_resident_memory_bytes{job="kprobectl"} > bool 1e6' 1
query 'process_start_time_seconds{job="kprobectl"} > bool (time() - 300)' 1
query 'rate(process_cpu_seconds_total{job="kprobectl"}[1m]) >= bool 0' 1
curl -sf "http://127.0.0.1:$kport/" | grep -q '<a href="/metrics">' || fail "no landing page at /"
echo "ok - a landing page at / links to /metrics"
if command -v promtool >/dev/null; then
  curl -sf "http://127.0.0.1:$kport/metrics" | promtool check metrics >"$dir/promtool.log" 2>&1 ||
    fail "promtool check metrics: $(cat "$dir/promtool.log")"
  echo "ok - promtool check metrics: no complaint"
fi

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
