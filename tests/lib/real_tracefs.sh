# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# For the script tests that add uprobes through the machine's real tracefs
# (tests/e2e/*.sh, tests/browser/pictures.sh): skip REASON skips (exit 4,
# which ctest reports as skipped), or fails where CI=true, where they must
# run; real_tracefs KPROBECTL sets $tracefs to where KPROBECTL finds it, or
# skips when this is not root or it has no writable uprobe_events.
# shellcheck source=../../scripts/lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/tracefs.sh"
skip() { [ "${CI:-}" = true ] && { echo "must run in CI: $1" >&2; exit 1; }; echo "SKIPPED: $1" >&2; exit 4; }
real_tracefs() {
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  tracefs=$(tracefs_dir "$1")
  [ -n "$tracefs" ] && [ -w "$tracefs/uprobe_events" ] || skip "no writable uprobe_events in tracefs (${tracefs:-not mounted})"
}
