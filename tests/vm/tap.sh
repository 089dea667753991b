# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The VM tests' results, one line each as TAP has them, sourced by the
# scripts that run in the guest (kernel_probes.sh, arm64_probes.sh,
# perf_probe_tests.sh): ok and not_ok count them in $n and $failed. Each
# result says when it came (seconds since the script began): the guest runs
# under TCG, and the log shows where its time goes.
failed=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1 [${SECONDS}s]"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1 [${SECONDS}s]"; shift; for line in "$@"; do echo "#   $line"; done; }
check() {  # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
  local what=$1; shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}
# TAP's SKIP: a check that cannot run here (it does not fail the run).
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# The plan, and the exit status: 0 when every check passed.
finish() {
  echo "1..$n"
  [ $failed -eq 0 ]
}
