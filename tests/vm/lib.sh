# shellcheck shell=bash disable=SC2154
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared by the kernel test scripts that run inside the VM (tests/vm/run):
# tap.sh's results, kprobectl bounded in time, and the kernel's debuginfo
# put where Debian's -dbg package puts it, so that kprobectl finds it alone.
# Sourced with $build (the build directory) and $vmlinux set.

# Every kprobectl run is bounded: a hang fails that check (exit 124) and the
# rest still runs. A CPU stuck in the kernel is caught by scripts/vm instead
# (the guest panics with its backtraces).
kp() { timeout -k 5 120 "$build/kprobectl" "$@"; }
release=$(uname -r)
mkdir -p /usr/lib/debug/boot
ln -sf "$vmlinux" "/usr/lib/debug/boot/vmlinux-$release"
# The kernel's packages, unpacked (scripts/vm): its modules (Debian 13's
# kernels keep them, their config and modules.builtin under /usr/lib), and
# its config where Debian installs it, /boot/config-RELEASE, as a machine
# running it has it (what kprobectl reads the config for, it reads there).
tree=${vmlinux%/usr/lib/debug/boot/*}
module_dir=$tree/lib/modules/$release
[ -d "$module_dir" ] || module_dir=$tree/usr/lib/modules/$release
config=$tree/boot/config-$release
[ -e "$config" ] || config=$module_dir/config
cp "$config" "/boot/config-$release"
tracefs=/sys/kernel/tracing
# shellcheck source=tests/vm/tap.sh
. "$(dirname "$0")/tap.sh"
nothing_left() { [ ! -s $tracefs/kprobe_events ] && [ -z "$(ls $tracefs/instances)" ]; }
