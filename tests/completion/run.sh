#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The bash completion (completions/kprobectl) against the built binary:
# commands, options, trace's options, and function names of the -x target.
# Usage: tests/completion/run.sh BUILD_DIR [FIXTURE_DIR]
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -r /usr/share/bash-completion/bash_completion ] || { echo "SKIPPED: bash-completion is not installed"; exit 4; }
export PATH="$build:$PATH"
# shellcheck disable=SC1091
source /usr/share/bash-completion/bash_completion
# shellcheck disable=SC1091
source "$src/completions/kprobectl"
failed=0
expect() {  # expect "WORDS..." EXPECTED
  local -a words
  read -r -a words <<<"$1"
  COMP_WORDS=("${words[@]}")
  COMP_CWORD=$((${#words[@]} - 1))
  COMP_LINE="$1"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _kprobectl
  if [ "${COMPREPLY[*]}" = "$2" ]; then echo "ok - $1 => $2"
  else echo "not ok - $1 => '${COMPREPLY[*]}', expected '$2'"; failed=1; fi
}
fx=${2:-$build/tests/fixtures}/target_O2
expect "kprobectl tr" "trace"
expect "kprobectl --fp" "--fprobe"
expect "kprobectl trace --lat" "--latency"
expect "kprobectl hi" "hist"
expect "kprobectl hist --cu" "--cumulative"
expect "kprobectl hist -k ust" "ustack"
expect "kprobectl hist -a --key ks" "kstack"
expect "kprobectl trace --form" "--format"
expect "kprobectl trace --format ti" "timeline"
expect "kprobectl hist --format f" "folded flamegraph"
expect "kprobectl hist --format ti" ""
expect "kprobectl hist --js" "--json"
expect "kprobectl -x $fx add comp" "compute"
expect "kprobectl -x $fx -D gre" "greet"
expect "kprobectl -x $fx vars comp" "compute"
expect "kprobectl --sd" "--sdt"
expect "kprobectl --target" "--target-ns"
expect "kprobectl --max" "--maxactive --max-probes"
expect "kprobectl --dem" "--demangle-kernel"
expect "kprobectl -x $fx funcs --fil" "--filter"
exit $failed
