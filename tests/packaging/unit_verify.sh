#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl-serve.service as installed (cmake --install into a temporary
# prefix: the binary its ExecStart names is there, and the man page its
# Documentation= names) read by systemd-analyze verify, which checks every
# setting's name and value, that ExecStart exists and that the man page
# opens: it must say nothing. Without systemd-analyze it skips (exit 4),
# except in CI.
# Usage: unit_verify.sh BUILD_DIR
set -u
build=$1
if ! command -v systemd-analyze >/dev/null; then
  [ "${CI:-}" = true ] && { echo "systemd-analyze is needed in CI (Debian's systemd)" >&2; exit 1; }
  echo "SKIPPED: no systemd-analyze (Debian's systemd)" >&2
  exit 4
fi
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >"$prefix/install.log" 2>&1 || { cat "$prefix/install.log"; exit 1; }
unit=$prefix/lib/systemd/system/kprobectl-serve.service
grep -qx "ExecStart=$prefix/bin/kprobectl serve -c /etc/kprobectl/serve.conf" "$unit" ||
  { echo "the unit's ExecStart is not the installed binary:"; grep ExecStart "$unit"; exit 1; }
out=$(MANPATH=$prefix/share/man systemd-analyze verify "$unit" 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
  echo "systemd-analyze verify (exit $rc):"
  echo "$out"
  exit 1
fi
echo "systemd-analyze verify $unit: nothing to say"
