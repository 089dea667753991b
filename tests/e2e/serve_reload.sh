#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl serve reloaded, on this machine's uprobes (the types fixture's
# tick(i)): SIGHUP with a changed file keeps the lines that did not change
# and their counts (a probe's hits, a table kprobectl counts), adds the new
# ones, removes the ones gone; a probe line that changed keeps its event's
# name and its hist line counts anew; a file with an error (a function
# that is not there, two filters on one event, another address) is
# refused, said in the log and in kprobectl_config_last_reload_successful,
# and what runs keeps running and counting; POST /-/reload is 403 until
# the file says enable-reload, then reloads and answers how it went.
# SIGTERM leaves nothing. Needs root and tracefs (skips with 4, except in CI).
# Usage: serve_reload.sh BUILD_DIR [FIXTURE_DIR]
set -euo pipefail
build=$1
# shellcheck source=../lib/real_tracefs.sh
source "$(dirname "$0")/../lib/real_tracefs.sh"
real_tracefs "$build/kprobectl"
command -v curl >/dev/null || skip "no curl (scripts/setup installs it)"

dir=$(mktemp -d)
group=kprld$$
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill -9 "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  "$build/kprobectl" -q clean >/dev/null 2>&1 || true
  grep -q "^[pr]:$group/" $tracefs/uprobe_events 2>/dev/null && "$build/kprobectl" -q del "$group:*" || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; echo "--- serve.log" >&2; tail -30 "$dir/serve.log" >&2; exit 1; }

kport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
types=${2:-$build/tests/fixtures}/types
url=http://127.0.0.1:$kport
conf=$dir/kprobectl.conf
write() {  # the configuration: listen, then the lines given
  { echo "listen 127.0.0.1:$kport"; printf '%s\n' "$@"; } >"$conf.new"
  mv "$conf.new" "$conf"
}
# One metric's value, or "none".
metric() {
  curl -sf "$url/metrics" | awk -v name="$1" '$1 == name { print $2; found = 1 } END { if (!found) print "none" }'
}
expect() {  # METRIC VALUE
  local got
  got=$(metric "$1")
  [ "$got" = "$2" ] || { curl -sf "$url/metrics" | grep -v "^#" | grep -v process_ >&2; fail "$1 is $got, not $2"; }
}
# Waits for the log's Nth line matching PATTERN.
logged() {
  for _ in $(seq 100); do
    [ "$(grep -c -- "$1" "$dir/serve.log" || true)" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "the log does not say '$1' ($2 times)"
}
# serve drains kprobectl's counting every 100 ms.
settle() { sleep 0.5; }

tick='kprobectl_probe_hits_total{event="'$group:tick'"}'
alone='kprobectl_probe_hits_total{event="'$group:alone'"}'
other='kprobectl_probe_hits_total{event="'$group:other'"}'
ticks='kprobectl_ticks_i_count{comm="types"}'
others='kprobectl_others_hits_total{comm="types"}'
ok='kprobectl_config_last_reload_successful'
failures='kprobectl_config_reload_failures_total'

write "probe -x $types $group:tick=tick i" "hist $group:tick -k comm,i.log2 --name ticks" \
  "probe -x $types '$group:alone=tick i'" "hist $group:alone -k comm --filter 'i >= 90' --name late"
"$build/kprobectl" serve -c "$conf" >"$dir/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do curl -sf "$url/metrics" >/dev/null 2>&1 && break; sleep 0.1; done
"$types" 100 >/dev/null
settle
expect "$tick" 100
expect "$ticks" 100
expect "$alone" 100
expect 'kprobectl_late_hits_total{comm="types"}' 10
expect "$ok" 1
reload_status() { curl -s -o "$dir/answer" -w '%{http_code}' -X POST "$url/-/reload"; }
[ "$(reload_status)" = 403 ] || fail "POST /-/reload without enable-reload: not 403"
grep -q "'enable-reload' in the configuration turns it on" "$dir/answer" || fail "the 403 does not say how to enable it"
echo "ok - running: counts as the program's, a filter applied; POST /-/reload is 403 until the file enables it"

# 1. A line added, a line removed, the rest moved about: kept counts.
write "enable-reload" "probe -x $types $group:other=tick" "hist $group:other -k comm --name others" \
  "hist $group:tick -k comm,i.log2 --name ticks" "probe -x $types $group:tick=tick i"
kill -HUP "$serve_pid"
logged "SIGHUP: .* read again" 1
grep -q "^p:$group/alone " $tracefs/uprobe_events && fail "reload: the removed probe is still there"
grep -q "^p:$group/other " $tracefs/uprobe_events || fail "reload: the added probe is not there"
expect "$alone" none
expect 'kprobectl_late_hits_total{comm="types"}' none
"$types" 50 >/dev/null
settle
expect "$tick" 150
expect "$ticks" 150
expect "$other" 50
expect "$others" 50
expect "$ok" 1
echo "ok - SIGHUP: kept lines keep their counts (150), the added one counts from 0 (50), the removed one is gone"

# 2. A changed probe line keeps its event's name; its hist counts anew.
write "enable-reload" "probe -x $types '$group:other=tick i'" "hist $group:other -k comm --name others" \
  "hist $group:tick -k comm,i.log2 --name ticks" "probe -x $types $group:tick=tick i"
[ "$(reload_status)" = 200 ] || fail "POST /-/reload: $(cat "$dir/answer")"
grep -q "^p:$group/other .* i=" $tracefs/uprobe_events || fail "reload: the changed probe is not there as changed"
"$types" 10 >/dev/null
settle
expect "$tick" 160
expect "$others" 10
echo "ok - POST /-/reload: a changed probe line keeps its name, its table counts anew, the rest keep counting"

# 3. Refused, whole: the running configuration keeps running.
refused() {  # WHAT EXPECTED-IN-LOG LINE...
  local what=$1 said=$2
  shift 2
  write "enable-reload" "$@"
  kill -HUP "$serve_pid"
  logged "SIGHUP: reload refused, the running configuration kept: .*$said" 1
  refusals=$((refusals + 1))
  expect "$ok" 0
  expect "$failures" "$refusals"
  echo "ok - refused: $what"
}
refusals=0
base=0
refused "a function that is not there" "no_such_function" "probe -x $types $group:tick=tick i" \
  "probe -x $types $group:gone=no_such_function" "hist $group:tick -k comm,i.log2 --name ticks"
two_filters=("probe -x $types $group:tick=tick i" "hist $group:tick -k comm --filter 'i < 5' --name a"
  "hist $group:tick -k comm --filter 'i > 5' --name b")
if grep -q "no hist triggers" "$dir/serve.log"; then
  refused "two filters on one event kprobectl counts" "with another --filter" "${two_filters[@]}"
else
  # The kernel counts: a trigger each, the kept table's trigger untouched.
  write "${two_filters[@]}" "hist $group:tick -k comm,i.log2 --name ticks" "probe -x $types '$group:other=tick i'" \
    "hist $group:other -k comm --name others"
  kill -HUP "$serve_pid"
  logged "SIGHUP: .* read again" 2
  "$types" 10 >/dev/null
  settle
  expect 'kprobectl_a_hits_total{comm="types"}' 5
  expect 'kprobectl_b_hits_total{comm="types"}' 4
  expect "$ticks" 170
  echo "ok - two filters on one event, the kernel counting: a trigger each, the kept one counting on"
  write "enable-reload" "probe -x $types '$group:other=tick i'" "hist $group:other -k comm --name others" \
    "hist $group:tick -k comm,i.log2 --name ticks" "probe -x $types $group:tick=tick i"
  kill -HUP "$serve_pid"
  logged "SIGHUP: .* read again" 3
  grep -q "if i < 5" "$tracefs"/instances/kprobectl-*/events/"$group"/tick/trigger &&
    fail "a removed hist line's trigger is still there"
  echo "ok - removed hist lines' triggers removed"
  base=10  # the counts below are 10 higher
fi
sed -i "1s/.*/listen 127.0.0.1:1/" "$conf"
kill -HUP "$serve_pid"
logged "is not where serve listens" 1
expect "$failures" "$((refusals + 1))"
echo "ok - refused: another address (a reload keeps the socket)"
grep -q "^p:$group/gone " $tracefs/uprobe_events && fail "a refused reload wrote its probe"
"$types" 10 >/dev/null
settle
expect "$tick" $((170 + base))
expect "$others" $((20 + base))
expect "$ticks" $((170 + base))
echo "ok - after the refusals the running configuration counts on ($((170 + base)))"
[ "$(reload_status)" = 500 ] || fail "POST /-/reload of a bad file: not 500"
grep -q "is not where serve listens" "$dir/answer" || fail "the 500 does not say why"
grep -q "the running configuration is kept" "$dir/answer" || fail "the 500 does not say what runs"
echo "ok - POST /-/reload of a bad file: 500, why, and the running configuration kept"

kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve exited with $? on SIGTERM"
serve_pid=
grep -q "$group" $tracefs/uprobe_events && fail "SIGTERM: a probe is still there"
[ -z "$(ls $tracefs/instances | grep '^kprobectl-')" ] || fail "SIGTERM: an instance is left"
echo "ok - SIGTERM after reloads: nothing left"
