#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Kernel probes defined at boot: runs inside a VM booted with the
# kprobe_event= that kprobectl --cmdline printed (tests/vm/run). The kernel
# made and enabled them before anything ran; they must be there, enabled,
# and fire with the values a program's open gives them.
# The line probe is at as many places as the line has ($open_probes in
# ANSWERS/kernel, tests/vm/kernel_answers.sh: 7.x's FD_ADD line has 5).
# Usage: boot_probes.sh BUILD_DIR ANSWERS
set -u
build=$1
# shellcheck source=/dev/null
. "$2/kernel"
tracefs=/sys/kernel/tracing
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
echo "# kernel $(uname -r), command line: $(tr ' ' '\n' </proc/cmdline | grep '^kprobe_event=')"
# The kernel lists a return probe as rMAXACTIVE: (r10: on a 2-CPU guest).
grep '^[pr][0-9]*:kpboot/' $tracefs/dynamic_events | sed 's/^/# /'
probes=$((open_probes + 1))
check "the kernel made the $probes probes kprobe_event= defined" \
  [ "$(grep -c '^[pr][0-9]*:kpboot/open' $tracefs/dynamic_events)" -eq $probes ]
# Enabled: set_event lists them. (An event's enable file, read this early
# in the guest, was seen to read empty now and then on 6.1, with set_event
# listing the event and the probe firing.)
enabled=$(grep -c '^kpboot:open\(_[0-9]*\|__return\)\?$' $tracefs/set_event)
[ "$enabled" = $probes ] && ok "... and enabled them at boot" ||
  not_ok "... and enabled them at boot" "set_event: $(tr '\n' ' ' <$tracefs/set_event)"
echo kpboot >/tmp/kpboot-file
cat /tmp/kpboot-file >/dev/null
# The trace file names an event without its group.
opened=$(grep -E ' open(_[0-9]+)?: \(do_sys_openat2\+0x[0-9a-f]*/0x[0-9a-f]*\) name="/tmp/kpboot-file"$' $tracefs/trace |
  tail -1)
echo "# $opened"
check "the line probe defined at boot fired with the file cat opened (a local's member, a string)" [ -n "$opened" ]
pid=$(sed -n 's/.*-\([0-9]*\) *\[.*/\1/p' <<<"$opened")
fd=$(awk -v pid="-$pid " 'index($0, pid) && /name="\/tmp\/kpboot-file"/ { seen = 1; next }
                          seen && index($0, pid) && / open__return: / { sub(/.* fd=/, ""); print; exit }' $tracefs/trace)
check "the return probe defined at boot has the fd the open returned (3 for cat)" [ "$fd" = 3 ]
listed=$("$build/kprobectl" list 'kpboot:*' 2>&1)
echo "$listed" | sed 's/^/# /'
check "kprobectl lists them" [ "$(grep -c '^  kpboot:open' <<<"$listed")" -eq $probes ]
problems=$(dmesg | grep -E 'BUG:|WARNING:|Oops|Failed to add event' || true)
[ -z "$problems" ] && ok "the kernel reported no failed event and no bug" ||
  not_ok "the kernel reported no failed event and no bug" "$problems"
echo "1..$n"
[ $failed -eq 0 ]
