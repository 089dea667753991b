# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# kprobectl's offline answers for an arm64 kernel image: the same commands,
# run by the x86-64 host's build (tests/vm/run) and by the arm64 build in
# the arm64 guest (arm64_probes.sh), must print the same bytes. -k VMLINUX
# with -D describes the image, not the running kernel, so nothing in them
# depends on KASLR or on which machine runs them. Sourced by both.
#
# offline_answers KPROBECTL VMLINUX MODULE_KO OUT_DIR OPEN_SPEC: writes each
# command's standard output and error, then its exit status, to
# OUT_DIR/NN (its command line first). OPEN_SPEC is a line of
# do_sys_openat2 with locals (open_full, tests/vm/kernel_answers.sh).
offline_answers() {
  local kprobectl=$1 vmlinux=$2 module=$3 out=$4 open=$5 n=0
  mkdir -p "$out"
  one() {
    n=$((n + 1))
    local file status=0
    file=$out/$(printf %02d $n)
    echo "> $*" >"$file"
    "$kprobectl" "$@" >>"$file" 2>&1 || status=$?
    echo "exit $status" >>"$file"
  }
  one -k "$vmlinux" -D 'vfs_read $params'
  one -k "$vmlinux" -D 'vfs_read%return $retval'
  one -k "$vmlinux" -D "$open"
  one -k "$vmlinux" -D c_start
  one -k "$vmlinux" -D s_show
  one -k "$vmlinux" -D 'rw_verify_area $params' -D getname_flags
  one -k "$vmlinux" vars do_sys_openat2
  one -k "$vmlinux" line vfs_read
  one -k "$vmlinux" --btf -D 'do_sys_openat2 filename:string how->flags'
  one -k "$vmlinux" -D el0_svc
  one -k "$vmlinux" -D 'vfs_read count=%di'
  one -m "$module" -D 'dummy_dev_init name=dev->name:string'
  # A struct in two registers (AAPCS64: x3, x4), from the DWARF's pieces and from BTF.
  one -k "$vmlinux" -D 'do_tcp_setsockopt $params'
  one -k "$vmlinux" --btf -D 'do_tcp_setsockopt $params'
}
