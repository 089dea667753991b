# shellcheck shell=bash disable=SC2154
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared by the scripts that run inside the VM (tests/vm/run): TAP output
# with the second each result came (the guest runs under TCG, and the log
# shows where its time goes), kprobectl bounded in time, and the kernel's
# debuginfo put where Debian's -dbg package puts it, so that kprobectl finds
# it alone. Sourced with $build (the build directory) and $vmlinux set.

# Every kprobectl run is bounded: a hang fails that check (exit 124) and the
# rest still runs. A CPU stuck in the kernel is caught by scripts/vm instead
# (the guest panics with its backtraces).
kp() { timeout -k 5 120 "$build/kprobectl" "$@"; }
release=$(uname -r)
mkdir -p /usr/lib/debug/boot
ln -sf "$vmlinux" "/usr/lib/debug/boot/vmlinux-$release"
tracefs=/sys/kernel/tracing
failed=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1 [${SECONDS}s]"; }
not_ok() {
  n=$((n + 1))
  failed=$((failed + 1))
  echo "not ok $n - $1 [${SECONDS}s]"
  shift
  for line in "$@"; do echo "#   $line"; done
}
check() {  # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}
# TAP's directives: a check that cannot run here, and one that waits for
# something kprobectl does not do yet (neither fails the run).
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
todo() { n=$((n + 1)); echo "not ok $n - $1 # TODO $2"; }
nothing_left() { [ ! -s $tracefs/kprobe_events ] && [ -z "$(ls $tracefs/instances)" ]; }
# The plan, and the exit status: 0 when every check passed.
finish() {
  echo "1..$n"
  [ $failed -eq 0 ]
}
