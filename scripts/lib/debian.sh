# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Debian packages fetched outside the system's package manager, for
# scripts/vm (kernels, qemu, the arm64 guest's userland) and scripts/build
# (the arm64 sysroot). Sourced; the caller sets $cache (a directory of its
# own). Nothing here changes the system's apt sources, its dpkg database or
# its dpkg architectures: each suite and architecture has an apt
# configuration of its own under $cache, and packages are unpacked with
# dpkg-deb, never installed.

# need PACKAGE...: installs the system's Debian packages that are missing
# (with their Recommends, as apt does by default).
need() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "$(basename "$0"): installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; }
}

# kernel_suite SERIES: the suite of Debian's archive whose newest cloud
# kernel of SERIES is the VM's (scripts/vm --kernel) and whose linux-perf
# is that kernel's perf (scripts/kernel-perf); nothing for another series.
kernel_suite() {
  case "$1" in
    5.10) echo bullseye ;;                # Debian 11
    6.1) echo bookworm ;;                 # Debian 12
    6.12) echo bookworm-backports ;;      # Debian 13's, built for Debian 12
    7.3) echo trixie-backports ;;
  esac
}

# apt_own ARCH SUITE apt-get|apt-cache ARGS...: apt on SUITE of Debian's
# archive for ARCH. The host's architecture reads the system's dpkg status
# (what is installed decides nothing here but apt wants one); another
# architecture (arm64 on this x86-64 machine) has its own, empty status file
# and APT::Architecture, so apt resolves as on an empty arm64 machine. The
# suite bookworm comes with bookworm-updates and bookworm-security, as a
# Debian 12 machine has them (the kernel's and linux-perf's latest builds
# are in bookworm-security).
# With $apt_empty set (apt_empty=1 make_root ...), the host's architecture
# has its own, empty status too (apt-ARCH-SUITE), so that a closure holds
# every package a program needs, the libc and its loader included, not
# only those the system lacks: another suite's program run with its own
# libraries (scripts/kernel-perf). A backports suite (trixie-backports)
# has no Depends of its own; with its own status it comes with the suite
# it backports to, whose packages apt prefers unless told
# (linux-perf/trixie-backports).
apt_own() {
  local arch=$1 suite=$2 tool=$3
  shift 3
  local dir=$cache/apt-$suite status=/var/lib/dpkg/status archopts=()
  if [ "$arch" != "$(dpkg --print-architecture)" ] || [ -n "${apt_empty:-}" ]; then
    dir=$cache/apt-$arch-$suite
    status=$dir/status
    archopts=(-o APT::Architecture="$arch" -o APT::Architectures="$arch")
  fi
  if [ ! -e "$dir/sources.list" ]; then
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    touch "$dir/status"
    local opts="[arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
    {
      echo "deb $opts http://deb.debian.org/debian $suite main"
      if [ "$suite" = bookworm ]; then
        echo "deb $opts http://deb.debian.org/debian bookworm-updates main"
        echo "deb $opts http://deb.debian.org/debian-security bookworm-security main"
      fi
      if [ "$status" != /var/lib/dpkg/status ] && [ "${suite%-backports}" != "$suite" ]; then
        echo "deb $opts http://deb.debian.org/debian ${suite%-backports} main"
      fi
    } >"$dir/sources.list.tmp"
    mv "$dir/sources.list.tmp" "$dir/sources.list"
  fi
  local opts=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/nonexistent
              -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Dir::State::status="$status"
              "${archopts[@]}")
  if ! compgen -G "$dir/lists/*_Packages*" >/dev/null; then apt-get "${opts[@]}" update -qq >&2; fi
  "$tool" "${opts[@]}" "$@"
}

# apt_own_update ARCH SUITE: fresh package lists (the archive drops old
# builds: a download that fails for want of them is tried again after this).
apt_own_update() {
  apt_own "$1" "$2" apt-get update -qq >&2
}

# download_closure ARCH SUITE DIR PACKAGE...: downloads the packages and
# everything they depend on (Depends and Pre-Depends, no Recommends), as
# apt resolves it for an empty machine of ARCH, into DIR.
download_closure() {
  local arch=$1 suite=$2 dir=$3
  shift 3
  mkdir -p "$dir/partial"
  local get=(apt-get install -d -y -qq --no-install-recommends -o Dir::Cache::archives="$dir")
  apt_own "$arch" "$suite" "${get[@]}" "$@" >&2 ||
    { apt_own_update "$arch" "$suite" && apt_own "$arch" "$suite" "${get[@]}" "$@" >&2; }
  rm -rf "$dir/partial" "$dir/lock"
}

# unpack_debs ROOT DEB...: unpacks packages into ROOT laid out as Debian 12
# installs them (merged /usr: /bin, /sbin and /lib are links into /usr,
# kept as links while unpacking). Maintainer scripts do not run.
unpack_debs() {
  local root=$1
  shift
  mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib"
  local d
  for d in bin sbin lib; do [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"; done
  for d in "$@"; do
    dpkg-deb --fsys-tarfile "$d" | tar -x -C "$root" --keep-directory-symlink || return 1
  done
}

# make_root DIR ARCH SUITE PACKAGE...: DIR/root holds the packages and
# their Depends closure (download_closure), unpacked (unpack_debs). Made
# once, and again when the list changes; $finish_root, if set, names a
# function run on DIR/root before it counts as complete. Says on stderr
# what it downloaded.
make_root() {
  local dir=$1 arch=$2 suite=$3
  shift 3
  local want="$arch $suite $*"
  if [ -e "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$want" ]; then return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  download_closure "$arch" "$suite" "$dir/debs" "$@"
  unpack_debs "$dir/root" "$dir"/debs/*.deb
  [ -z "${finish_root:-}" ] || "$finish_root" "$dir/root"
  (cd "$dir/debs" && ls -1 -- *.deb) >"$dir/packages"
  echo "$(basename "$0"): $dir: $(wc -l <"$dir/packages") $arch packages, $(du -sm "$dir/debs" | cut -f1) MB" \
       "downloaded, $(du -sm "$dir/root" | cut -f1) MB unpacked" >&2
  rm -rf "$dir/debs"
  echo "$want" >"$dir/.complete"
}
