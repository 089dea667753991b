# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# tracefs_dir KPROBECTL: prints where tracefs is, by kprobectl's rule (a
# tracefs mount, else tracing/ under a debugfs mount: src/tracefs/locate.cc),
# after running KPROBECTL once so that, as root, it mounts tracefs where none
# is. Debian mounts it at /sys/kernel/tracing, but a machine may have it only
# at /sys/kernel/debug/tracing. Prints nothing when there is none.
tracefs_dir() {
  "$1" -q list >/dev/null 2>&1 || true
  local dir
  dir=$(findmnt -rn -t tracefs -o TARGET | head -n 1)
  if [ -z "$dir" ]; then
    dir=$(findmnt -rn -t debugfs -o TARGET | head -n 1)
    [ -n "$dir" ] && dir=$dir/tracing
  fi
  printf '%s\n' "$dir"
}
