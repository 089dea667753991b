#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl hist in the VM (tests/vm/run BUILD KERNEL hist_probes), where
# the kernel has hist triggers (Debian's 6.1, 6.12, 7.3) and where it has
# none (Debian's 5.10 cloud kernel: CONFIG_HIST_TRIGGERS is not set, as
# its README says): there kprobectl counts every table itself, says why,
# and its tables are checked the same; what needs the kernel's triggers
# or synthetic events is skipped, naming what the kernel lacks. The e2e hist
# tests on uprobes (the kernel counting, as this README says it can); a
# kprobe counted by the kernel equal to what dd did, only the command's
# (another process makes the same calls), and the same table from
# kprobectl's own counting (--in-user-space), by comm and by kernel stack; latency in the kernel
# (synthetic events) equal to kprobectl's pairing and trace --latency;
# nothing left, after a SIGKILL either once clean ran; serve scraped by
# Prometheus with the kernel counting.
# Usage: hist_probes.sh BUILD_DIR VMLINUX
set -u
build=$1
vmlinux=$2
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

echo "# kernel $release on $(uname -m)"
# What the kernel has, from its README (kernel/trace/trace.c's readme_msg
# has these lines with CONFIG_HIST_TRIGGERS and CONFIG_SYNTH_EVENTS only).
kernel_hist=0 kernel_synthetic=0
grep -q 'hist trigger' $tracefs/README && kernel_hist=1
grep -q 'synthetic_events' $tracefs/README && kernel_synthetic=1
echo "# hist triggers: $kernel_hist, synthetic events: $kernel_synthetic"
check "the README's hist triggers are the trigger file's" \
  [ "$kernel_hist" = "$(grep -c ' hist$' $tracefs/events/sched/sched_switch/trigger)" ]

out=$("$build/tests/e2e_tests" 'hist*' 2>&1)
check "the e2e hist tests on uprobes, the kernel counting" [ $? -eq 0 ]
echo "$out" | grep -A40 'FAILED:' | sed 's/^/# /'
echo "$out" | tail -3 | sed 's/^/# /'

# serve with the kernel counting, scraped by a real Prometheus (over the
# guest's loopback, which is down at boot).
ip link set lo up 2>/dev/null || busybox ip link set lo up
out=$("$(dirname "$0")/../e2e/serve_prometheus.sh" "$build" 2>&1)
check "serve scraped by Prometheus, the kernel counting" [ $? -eq 0 ]
echo "$out" | grep -v Killed | sed 's/^/# /'
check "nothing left after serve" nothing_left
out=$("$(dirname "$0")/../e2e/serve_reload.sh" "$build" 2>&1)
check "serve reloaded, the kernel counting: triggers kept, added, removed" [ $? -eq 0 ]
echo "$out" | sed 's/^/# /'
check "nothing left after serve's reloads" nothing_left

# dd reads its standard input 300 times, 1000 bytes each; a neighbour
# reads its own at the same time, which the command's filter leaves out.
(while :; do head -c 1000 /dev/zero >/dev/null; done) </dev/zero &
noise=$!
probe='kph:read=ksys_read fd=%di:s32 count=%dx:u64'
for side in kernel user; do
  extra=()
  [ $side = user ] && extra=(--in-user-space)
  kp hist "${extra[@]}" --probe "$probe" -k comm,count --sum count --filter 'fd == 0' -o /tmp/kph-$side \
    -- dd bs=1000 count=300 of=/dev/null </dev/zero 2>/tmp/kph-$side.err
  check "hist ($side) runs" [ $? -eq 0 ]
  sed 's/^/# /' /tmp/kph-$side /tmp/kph-$side.err
  printf 'kph:read: 300 hits\n  comm  count  hits  sum(count)\n  dd     1000   300      300000\n' >/tmp/kph-expected
  check "hist ($side): dd's 300 reads of 1000 bytes, summed, and nothing else" diff /tmp/kph-expected /tmp/kph-$side
  check "nothing left after hist ($side)" nothing_left
done
# A kernel stack key: dd's 300 reads under one stack, the probed function
# its top frame (the kernel's kprobe frames above it left out), on the
# kernel's side (the stacktrace key) and kprobectl's (options/stacktrace).
# kprobectl's side: an event its reader reached before the kernel wrote its
# stack record after it is counted under "[no stack]" (1 of 300 seen).
one_stack() {
  local n
  n=$(awk '$1 == "dd" && $2 == "ksys_read" { n += $3 } $1 == "dd" && $2 == "[no" { n += $4 } END { print n + 0 }' "$1")
  grep -q '^kph:read: 300 hits$' "$1" && [ "$n" = 300 ] && grep -Eq '^ +do_syscall_64\+0x[0-9a-f]+$' "$1" &&
    { [ "$2" = user ] || [ "$(grep -c '^  [^ ]' "$1")" = 2 ]; }
}
for side in kernel user; do
  extra=()
  [ $side = user ] && extra=(--in-user-space)
  kp hist "${extra[@]}" --probe "$probe" -k comm,kstack --filter 'fd == 0' -o /tmp/kph-kstack-$side \
    -- dd bs=1000 count=300 of=/dev/null </dev/zero 2>/tmp/kph-kstack-$side.err
  check "hist -k kstack ($side) runs" [ $? -eq 0 ]
  sed 's/^/# /' /tmp/kph-kstack-$side /tmp/kph-kstack-$side.err
  check "hist -k kstack ($side): 300 reads, one stack, ksys_read on top" one_stack /tmp/kph-kstack-$side $side
  check "nothing left after hist -k kstack ($side)" nothing_left
done
# The frames, without the counts (and kprobectl's "[no stack]" row).
frames_of() { grep -v '\[no stack\]' "$1" | sed '1d;s/  *[0-9][0-9]*$//'; }
check "hist -k kstack: the kernel's stacks and kprobectl's agree" \
  eval 'frames_of /tmp/kph-kstack-kernel >/tmp/kph-kf-kernel && frames_of /tmp/kph-kstack-user >/tmp/kph-kf-user &&
    diff /tmp/kph-kf-kernel /tmp/kph-kf-user'

if [ $kernel_hist = 1 ]; then
  check "the kernel counted: no word of kprobectl counting" [ -z "$(grep 'aggregating in kprobectl' /tmp/kph-kernel.err)" ]
  check "--in-user-space says so" grep -q '^kprobectl: --in-user-space: aggregating in kprobectl, which copies every event' \
    /tmp/kph-user.err
else
  check "without hist triggers kprobectl counted, and said why" \
    eval 'grep -q "^kprobectl: this kernel has no hist triggers (CONFIG_HIST_TRIGGERS): aggregating in kprobectl" \
      /tmp/kph-kernel.err /tmp/kph-user.err && [ "$(grep -c "aggregating in kprobectl" /tmp/kph-kernel.err)" = 1 ]'
fi
kill $noise
wait $noise 2>/dev/null

# A log2 key on the kernel's side and ours, on the same workload: equal.
for side in kernel user; do
  extra=()
  [ $side = user ] && extra=(--in-user-space)
  kp hist -q "${extra[@]}" --probe "$probe" -k count.log2 --filter 'fd == 0' -o /tmp/kph-log2-$side \
    -- sh -c 'for n in 1 7 100 1000 4096; do head -c $n /dev/zero | dd bs=$n count=1 of=/dev/null status=none; done' \
    2>/dev/null
done
sed 's/^/# /' /tmp/kph-log2-kernel
check "log2 buckets: the kernel's and kprobectl's agree" diff /tmp/kph-log2-kernel /tmp/kph-log2-user
check "nothing left" nothing_left

# Latency in the kernel: hrtimer_nanosleep's entry and return paired per
# thread by a synthetic event; 3, 12 and 48 ms naps in their buckets, as
# kprobectl's own pairing and trace --latency have them.
naps=(3000x4 12000x3 48000x2)
sleeper=$build/tests/fixtures/sleeper
# Calls that took more than NS by a table's rows "(A, B]" (A >= NS).
at_least() { awk -v ns="$2" '$2 ~ /^\(/ { a = substr($2, 2) + 0; if (a + 1 >= ns) n += $4 } END { print n + 0 }' "$1"; }
# A VM's sleeps overshoot: each nap in its bucket or above, none below.
naps_in_buckets() {
  grep -q '^kph:nap__return: 9 hits$' "$1" && [ "$(at_least "$1" 2097152)" = 9 ] &&
    [ "$(at_least "$1" 8388608)" -ge 5 ] && [ "$(at_least "$1" 33554432)" -ge 2 ] &&
    grep -q '^latency percentiles: p50 in (.*(bounds: only buckets were counted)$' "$1" &&
    [ -z "$(grep -v '^kph:\|  comm \|  sleeper \|^latency percentiles: ' "$1")" ]
}
for side in kernel user; do
  extra=()
  [ $side = user ] && extra=(--in-user-space)
  kp hist --latency "${extra[@]}" --probe 'kph:nap=hrtimer_nanosleep%return' -o /tmp/kph-lat-$side \
    -- "$sleeper" "${naps[@]}" 2>/tmp/kph-lat-$side.err
  sed 's/^/# /' /tmp/kph-lat-$side /tmp/kph-lat-$side.err
  check "hist --latency ($side) on a kretprobe: 9 naps, each in its bucket or above" naps_in_buckets /tmp/kph-lat-$side
  check "nothing left after hist --latency ($side), no synthetic event" \
    eval 'nothing_left && [ -z "$(cat $tracefs/synthetic_events 2>/dev/null)" ]'
done
kp -q trace --latency -o /dev/null --probe 'kph:nap=hrtimer_nanosleep%return' -- "$sleeper" "${naps[@]}" \
  2>/tmp/kph-lat-trace.err
sed 's/^/# /' /tmp/kph-lat-trace.err
check "trace --latency agrees: 9 calls, none under 3 ms" \
  eval 'grep -q "hrtimer_nanosleep: 9 calls, min [3-9][0-9]\{6\} ns" /tmp/kph-lat-trace.err'
kp hist -n --latency --probe 'kph:nap=hrtimer_nanosleep%return' | sed 's/^/# /'

# Killed in the middle: clean removes the instance, its triggers and the
# synthetic event.
if [ $kernel_hist = 1 ] && [ $kernel_synthetic = 1 ]; then
  "$build/kprobectl" hist --latency --probe 'kph:nap=hrtimer_nanosleep%return' -a >/dev/null 2>&1 &
  hist=$!
  for _ in $(seq 100); do grep -q kplat $tracefs/synthetic_events && break; sleep 0.1; done
  sleep 0.5
  kill -9 $hist
  wait $hist 2>/dev/null
  check "SIGKILL leaves the synthetic event" grep -q kplat $tracefs/synthetic_events
  kp clean 2>&1 | sed 's/^/# /'
  check "clean removes it, the instance and the probes" eval 'nothing_left && [ -z "$(cat $tracefs/synthetic_events 2>/dev/null)" ]'
else
  skip "SIGKILL leaves the synthetic event; clean removes it" \
    "this kernel has no hist triggers or synthetic events (CONFIG_HIST_TRIGGERS, CONFIG_SYNTH_EVENTS)"
fi
finish
