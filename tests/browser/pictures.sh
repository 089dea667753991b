#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl's pictures of a real run, opened as a person opens them
# (issue 38), on this machine's uprobes:
#   flamegraph: hist -k ustack --format flamegraph of `callers 30 7` (work()
#     called 30 times from caller_a, 7 from caller_b), drawn by headless
#     chromium; in the screenshot the two callers' frames are 30:7 within a
#     pixel, and the picture is not blank (picture_check.py flame).
#   heatmap: trace --latency --format heatmap of `sleeper 1000x6 100000x3`,
#     drawn by chromium: not blank, each cell drawn in its colour where the
#     SVG puts it, the six 1 ms naps in rows from 0.5 to 32 ms (a busy
#     machine wakes late) and the three 100 ms naps in rows from 64 to 256 ms
#     (picture_check.py heat).
#   timeline: trace --format timeline of `callers 3 2` with caller_a and
#     work paired with their returns (caller_b without one: an instant),
#     loaded by speedscope (npm, pinned, offline: scripts/setup installs
#     it) in chromium; what speedscope exports of it (its Ctrl+S) has each
#     thread's slices, as many as the file's, work nested 3 times in
#     caller_a (picture_check.py timeline).
#   folded: trace --format folded of `callers 30 7`, read by speedscope as
#     folded ("collapsed") stacks: the stacks and counts it exports are the
#     file's, ending in caller_a;work 30 and caller_b;work 7
#     (picture_check.py folded).
# Needs root, tracefs, chromium (and speedscope for the timeline and
# folded stacks): skips
# with 4 without them, except in CI (CI=true), where they must be there.
# Usage: pictures.sh BUILD_DIR FIXTURE_DIR flamegraph|heatmap|timeline|folded
set -euo pipefail
build=$1 fixtures=$2 picture=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/real_tracefs.sh
source "$here/../lib/real_tracefs.sh"
# shellcheck source=../../scripts/lib/tools.sh
source "$here/../../scripts/lib/tools.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
real_tracefs "$build/kprobectl"
command -v chromium >/dev/null || skip "no chromium (scripts/setup installs it: apt-get install chromium)"
[ "$picture" != timeline ] && [ "$picture" != folded ] || [ -f "$(speedscope_release)/index.html" ] ||
  skip "no speedscope $SPEEDSCOPE_VERSION in $(tools_cache) (scripts/setup installs it from npm)"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
kprobectl=("$build/kprobectl" -q)

# speedscope_export FILE OUT: FILE loaded by speedscope in chromium the way
# its own command line hands it a file (a script calling
# speedscope.loadFileFromBase64, named in the page's hash); a script before
# speedscope's presses its Ctrl+S ("export") once it has loaded, and puts
# what it exports on the page, which --dump-dom writes to OUT.
speedscope_export() {
  local release
  release=$(speedscope_release)
  python3 - "$1" "$dir/profile.js" <<'PY'
import base64, json, os, sys
data = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
name = json.dumps(os.path.basename(sys.argv[1]))
open(sys.argv[2], "w").write("speedscope.loadFileFromBase64(%s, %s)" % (name, json.dumps(data)))
PY
  cat >"$dir/viewer.html" <<HTML
<!DOCTYPE html>
<html><head><meta charset="UTF-8"><link rel="stylesheet" href="file://$(echo "$release"/speedscope-*.css)"></head>
<body>
<script>
const made = URL.createObjectURL;
URL.createObjectURL = blob => {
  blob.text().then(text => {
    const pre = document.createElement('pre');
    pre.id = 'exported';
    pre.textContent = text;
    document.documentElement.appendChild(pre);
  });
  return made(blob);
};
HTMLAnchorElement.prototype.click = function () {};
let tries = 0;
const save = () => {
  if (document.getElementById('exported') || ++tries > 100) return;
  window.dispatchEvent(new KeyboardEvent('keydown', {key: 's', ctrlKey: true}));
  setTimeout(save, 100);
};
setTimeout(save, 200);
</script>
<script src="file://$(echo "$release"/speedscope-*.js)"></script>
</body></html>
HTML
  chromium_headless --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom \
    "file://$dir/viewer.html#localProfilePath=$dir/profile.js" >"$2"
}

case "$picture" in
  flamegraph)
    "${kprobectl[@]}" hist -x "$fixtures/callers" --probe "kpb$$:work=work" -k ustack --format flamegraph \
      -o "$dir/callers.svg" -- "$fixtures/callers" 30 7 >/dev/null
    chromium_headless --window-size=1200,400 --screenshot="$dir/callers.png" "file://$dir/callers.svg" >/dev/null
    python3 "$here/picture_check.py" flame "$dir/callers.svg" "$dir/callers.png" 30 7 caller_a caller_b
    ;;
  heatmap)
    "${kprobectl[@]}" trace -x "$fixtures/sleeper" --probe "kpb$$:nap=nap" --probe "kpb$$:nap_ret=nap%return" \
      --latency --format heatmap -o "$dir/naps.svg" -- "$fixtures/sleeper" 1000x6 100000x3 >/dev/null
    chromium_headless --window-size=1200,400 --screenshot="$dir/naps.png" "file://$dir/naps.svg" >/dev/null
    python3 "$here/picture_check.py" heat "$dir/naps.svg" "$dir/naps.png" 524288-33554432:6 \
      67108864-268435456:3
    ;;
  timeline)
    "${kprobectl[@]}" trace -x "$fixtures/callers" --probe "kpb$$:work=work i" \
      --probe "kpb$$:work_ret=work%return \$retval" --probe "kpb$$:ca=caller_a n" \
      --probe "kpb$$:ca_ret=caller_a%return \$retval" --probe "kpb$$:cb=caller_b n" --format timeline \
      -o "$dir/callers.json" -- "$fixtures/callers" 3 2 >/dev/null
    speedscope_export "$dir/callers.json" "$dir/dom.html"
    python3 "$here/picture_check.py" timeline "$dir/callers.json" "$dir/dom.html" 3
    ;;
  folded)
    "${kprobectl[@]}" trace -x "$fixtures/callers" --probe "kpb$$:work=work" --format folded \
      -o "$dir/callers.folded" -- "$fixtures/callers" 30 7 >/dev/null
    speedscope_export "$dir/callers.folded" "$dir/dom.html"
    python3 "$here/picture_check.py" folded "$dir/callers.folded" "$dir/dom.html"
    ;;
  *) fail "no picture '$picture'" ;;
esac
