#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The arm64 VM is usable for kprobectl's kernel and user tests: runs inside
# it (tests/vm/arm64-run), as root, on Debian's arm64 cloud kernel. The
# kernel and user probes here are written by hand, in the arm64 registers
# (%x0, %x1...), so they need nothing of kprobectl's own arm64 support; the
# arm64 VM suite grows from here. Prints a TAP-like log (tap.sh).
# Usage: arm64_smoke.sh BUILD_ARM64_DIR VMLINUX
set -u
build=$1
vmlinux=$2
release=$(uname -r)
tracefs=/sys/kernel/tracing
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
# trace_of COMMAND...: enables every event, runs COMMAND, prints the trace.
trace_of() {
  echo >$tracefs/trace
  echo 1 >$tracefs/events/kpsmoke/enable
  "$@" >/dev/null
  echo 0 >$tracefs/events/kpsmoke/enable
  cat $tracefs/trace
}
nothing_left() { [ ! -s $tracefs/kprobe_events ] && [ ! -s $tracefs/uprobe_events ]; }

echo "# kernel $release on $(uname -m), KASLR _stext at $(grep ' _stext$' /proc/kallsyms | cut -d' ' -f1)"
check "the guest is arm64" [ "$(uname -m)" = aarch64 ]
version=$("$build/kprobectl" --version 2>&1)
echo "# $version"
check "the arm64 build of kprobectl runs" grep -q '^kprobectl ' <<<"$version"
onpath=$(command -v kprobectl)
check "kprobectl on PATH is an arm64 build ($onpath) that runs" \
  sh -c 'case "$1" in */build-arm64/kprobectl) "$1" --version >/dev/null ;; *) false ;; esac' sh "$onpath"

# The kernel's vmlinux with DWARF, at the path scripts/vm --kernel-info
# names: the running kernel's build (the same build-id), read by perf.
running=$(perf buildid-list -k 2>/dev/null)
image=$(perf buildid-list -i "$vmlinux" 2>/dev/null | cut -d' ' -f1)
echo "# build-id: running $running, $vmlinux $image"
check "the vmlinux is the running kernel's (build-id)" test -n "$running" -a "$running" = "$image"
mkdir -p /usr/lib/debug/boot
ln -sf "$vmlinux" "/usr/lib/debug/boot/vmlinux-$release"
vars=$(perf probe -V vfs_read 2>&1)
echo "$vars" | sed 's/^/# /'
check "arm64 perf reads the vmlinux's DWARF (perf probe -V vfs_read)" grep -q 'struct file\*[[:space:]]*file' <<<"$vars"

# What the kernel offers the probe tools.
for f in /sys/kernel/debug/kprobes/blacklist $tracefs/available_filter_functions; do
  lines=$(wc -l <"$f" 2>/dev/null)
  check "$f is there (${lines:-no} lines)" [ "${lines:-0}" -gt 0 ]
done
check "/sys/kernel/btf/vmlinux is there ($(stat -c %s /sys/kernel/btf/vmlinux 2>/dev/null) bytes)" [ -s /sys/kernel/btf/vmlinux ]

# 1. A kernel probe and a return probe written by hand: the first two
#    arguments in x0 and x1 (AAPCS64), the return value.
echo kprobectl >/tmp/kpsmoke-file
{ echo 'p:kpsmoke/open do_sys_openat2 dfd=%x0:s32 name=+0(%x1):ustring' >>$tracefs/kprobe_events &&
  echo 'r:kpsmoke/opened do_sys_openat2 fd=$retval:s32' >>$tracefs/kprobe_events; } 2>/dev/null
check "kprobe_events takes a probe on do_sys_openat2 with %x0 and %x1" grep -q '^p:kpsmoke/open ' $tracefs/kprobe_events
trace=$(trace_of cat /tmp/kpsmoke-file)
opened=$(grep ' open: .* name="/tmp/kpsmoke-file"' <<<"$trace" | head -1)
grep -e '-[0-9]* *\[' <<<"$trace" | grep cat | head -4 | sed 's/^/# /'
check "the kprobe fired with the file name cat opened and AT_FDCWD" grep -q 'dfd=-100 name="/tmp/kpsmoke-file"' <<<"$opened"
pid=$(sed -n 's/.*-\([0-9]*\) *\[.*/\1/p' <<<"$opened")
fd=$(awk -v pid="-$pid " 'index($0, pid) && /name="\/tmp\/kpsmoke-file"/ { seen = 1; next }
                          seen && index($0, pid) && /opened:/ { sub(/.* fd=/, ""); print; exit }' <<<"$trace")
check "the return probe has the fd the open returned (3 for cat)" [ "$fd" = 3 ]
echo >$tracefs/kprobe_events
check "nothing left after the kernel probes" nothing_left

# 2. A user probe written by hand on the cross-built fixture: compute(a, b)
#    in the arm64 target_O2 (PIE), its arguments in w0 and w1, the result
#    a * b + 1000. The file offset comes from the symbol and the LOAD
#    segment holding it, in the readelf output the build keeps.
fixture=$build/tests/fixtures/target_O2
offset=$(awk '$1 == "LOAD" { off[++n] = strtonum($2); va[n] = strtonum($3); size[n] = strtonum($6) }
              $4 == "FUNC" && $NF == "compute" { sym = strtonum("0x" $2) }
              END { for (i = 1; i <= n; i++) if (sym >= va[i] && sym < va[i] + size[i]) printf "0x%x", sym - va[i] + off[i] }' \
           "$fixture.readelf")
echo "# compute at $fixture:$offset"
{ echo "p:kpsmoke/compute $fixture:$offset a=%x0:s32 b=%x1:s32" >>$tracefs/uprobe_events &&
  echo "r:kpsmoke/computed $fixture:$offset ret=%x0:s32" >>$tracefs/uprobe_events; } 2>/dev/null
check "uprobe_events takes a probe on the arm64 fixture with %x0" grep -q '^p:kpsmoke/compute ' $tracefs/uprobe_events
defs=$("$build/kprobectl" -x "$fixture" -D 'compute a b' 2>&1)
echo "# $defs"
check "the arm64 kprobectl writes the same definition from the DWARF" \
  [ "$defs" = "p:probe_target_O2/compute $fixture:$offset a=%x0:s32 b=%x1:s32" ]
trace=$(trace_of "$fixture" 6 7)
grep 'kpsmoke' <<<"$trace" | sed 's/^/# /'
check "the uprobe fired with compute's arguments (6, 7)" grep -q 'compute: (0x[0-9a-f]*) a=6 b=7$' <<<"$trace"
check "the return uprobe has its result (6 * 7 + 1000)" grep -q 'computed: (0x[0-9a-f]* <- 0x[0-9a-f]*) ret=1042$' <<<"$trace"
echo >$tracefs/uprobe_events
check "nothing left after the user probes" nothing_left

# 3. perf, the reference, adds a kernel probe from the DWARF: the third
#    argument of vfs_read in x2.
out=$(perf probe -q -a 'kpsmoke_perf=vfs_read count' 2>&1)
defs=$(cat $tracefs/kprobe_events)
echo "# $out"
echo "# $defs"
check "perf probe writes vfs_read's count as %x2" grep -q '^p:probe/kpsmoke_perf .* count=%x2:[ux]64$' <<<"$defs"
perf probe -q -d 'probe:kpsmoke_perf' >/dev/null 2>&1
check "nothing left after perf's probe" nothing_left

echo "1..$n"
echo "# $failed of $n failed"
[ "$failed" -eq 0 ]
