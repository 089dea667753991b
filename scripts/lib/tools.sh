# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The viewers the browser tests open kprobectl's pictures in, where
# scripts/setup installs them and the tests find them: Debian's chromium
# (apt), and speedscope from npm, pinned, in a cache directory outside the
# repository (KPROBECTL_TOOLS_CACHE; /var/cache/kprobectl-tools for root,
# ~/.cache/kprobectl-tools otherwise).
SPEEDSCOPE_VERSION=1.25.0

tools_cache() {
  if [ -n "${KPROBECTL_TOOLS_CACHE:-}" ]; then printf '%s\n' "$KPROBECTL_TOOLS_CACHE"
  elif [ "$(id -u)" -eq 0 ]; then printf '%s\n' /var/cache/kprobectl-tools
  else printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/kprobectl-tools"; fi
}

# speedscope's release files (index.html, speedscope-*.js) of the pinned version.
speedscope_release() {
  printf '%s\n' "$(tools_cache)/speedscope-$SPEEDSCOPE_VERSION/node_modules/speedscope/dist/release"
}

# Installs the pinned speedscope into the cache, unless it is there.
install_speedscope() {
  local dir
  dir="$(tools_cache)/speedscope-$SPEEDSCOPE_VERSION"
  [ -f "$(speedscope_release)/index.html" ] && return 0
  mkdir -p "$dir"
  npm install --no-audit --no-fund --no-save --prefix "$dir" "speedscope@$SPEEDSCOPE_VERSION" >&2
}

# chromium, headless, as the tests run it: no sandbox (root), no GPU, and
# none of its network services (on a closed network they hang it).
chromium_headless() {
  local profile status=0
  profile=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
    "$@" 2>"$profile.log" || status=$?
  [ "$status" -eq 0 ] || tail -20 "$profile.log" >&2
  rm -rf "$profile" "$profile.log"
  return "$status"
}
