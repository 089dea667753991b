#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Kernel probes for real: runs inside the VM (tests/vm/run), as root, on
# Debian's cloud kernel with KPROBE_EVENTS and KASLR, x86-64 or arm64 (the
# guest's). The kernel's debuginfo is put where Debian's -dbg package puts
# it, so kprobectl finds it alone. ANSWERS holds what the host found in
# the image: $ANSWERS/kernel, the lines this build has the code the probes
# need at (tests/vm/kernel_answers.sh); in the arm64 VM, where BUILD_DIR is
# the arm64 cross-build, arm64_probes.sh follows: arm64's own rules, the
# host's offline answers against the guest's, and user-space probes on the
# arm64 fixtures. What a kernel lacks (event probes before 5.15, fprobes
# and tracepoint probes before 6.5, $argN at returns before 6.9) is read
# from its tracefs README, and kprobectl's refusal is checked instead.
# Usage: kernel_probes.sh BUILD_DIR VMLINUX ANSWERS
set -u
build=$1
vmlinux=$2
host_answers=$3
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# open_line, open_var, open_how, open_probes, open_spec, open_full,
# open_names, init_line, init_err, optval_computed, dwarf_entry, btf_openat2
# shellcheck source=/dev/null
. "$host_answers/kernel"

# What differs between the architectures, all of it here: the registers of
# the first three arguments; where a DWARF entry probe is written (arm64:
# where the DWARF begins, $dwarf_entry from the host's gdb: +8, after
# ftrace's two patchable NOPs, on 5.10 to 6.12, +0 on 7.3) and where it
# fires (6.12's x86-64 kernel moves a probe at +0 past its ENDBR64: +0x4);
# where a BTF one (at the symbol) fires; the symbol KASLR-safe targets
# count from; a function on the kprobe blacklist; O_LARGEFILE, which the
# kernel adds to every open.
arch=$(uname -m)
case "$arch" in
  x86_64) arg1=%di arg2=%si arg3=%dx entry=0 at_entry='0x[04]' btf_at_entry='0x[04]' text=_text
    blacklisted=do_int3 o_largefile=32768 ;;
  aarch64) arg1=%x0 arg2=%x1 arg3=%x2 entry=$dwarf_entry at_entry=$(printf 0x%x "$dwarf_entry") btf_at_entry=0x0
    text=_stext blacklisted=do_mem_abort o_largefile=131072 ;;
  *) echo "# no VM suite for $arch"; exit 1 ;;
esac

echo "# kernel $release on $arch, KASLR _stext at $(grep ' _stext$' /proc/kallsyms | cut -d' ' -f1)"

# 1. A line probe in a syscall path with a local variable and a string, a
#    return probe with $retval: the file name opened and the fd returned.
#    The line is one where getname()'s struct filename is there ($open_var
#    at do_sys_openat2:$open_line; 7.x's FD_ADD line has several places,
#    a probe each: open, open_1...).
echo "# do_sys_openat2:$open_line has $open_var, in $open_probes place(s)"
echo kprobectl >/tmp/kpvm-file
out=$(kp add "kpvm:open=$open_full" 2>&1) &&
  kp -q add 'kpvm:open=do_sys_openat2%return fd=$retval' 2>&1
check "add a line probe with a local and a string, and a return probe" [ $? -eq 0 ]
echo "# $out"
listed=$(kp list 'kpvm:*' 2>&1)
echo "$listed" | sed 's/^/# /'
# (A place that is an inlined helper's is listed as that helper's, as perf
# lists it: 7.x's FD_ADD expands to class_fd_prepare_*.)
check "list maps the line probe back to its source, each of its $open_probes place(s) listed" \
  eval 'grep -q "kpvm:open	(on do_sys_openat2:$open_line@.*fs/open.c with $open_names)" <<<"$listed" &&
    [ "$(grep -Ec "kpvm:open(_[0-9]+)?	\(on .* with $open_names\)" <<<"$listed")" = "$open_probes" ]'
check "list maps the return probe back to its source" grep -q 'kpvm:open__return	(on do_sys_openat2%return@.*fs/open.c with fd)' <<<"$listed"
trace=$(kp trace -o /tmp/kpvm-trace 'kpvm:*' -- cat /tmp/kpvm-file 2>&1)
echo "# $trace"
opened=$(grep ' name="/tmp/kpvm-file"' /tmp/kpvm-trace | head -1)
check "the traced file name is the one cat opened" [ -n "$opened" ]
pid=$(sed -n 's/.*-\([0-9]*\) *\[.*/\1/p' <<<"$opened")
# The return that follows that open in the same process.
fd=$(awk -v pid="-$pid " 'index($0, pid) && /name="\/tmp\/kpvm-file"/ { seen = 1; next }
                          seen && index($0, pid) && /kpvm:open__return/ { sub(/.* fd=/, ""); print; exit }' /tmp/kpvm-trace)
grep -- "-$pid " /tmp/kpvm-trace | sed 's/^/# /' | tail -4
check "the return probe has the fd the open returned (3 for cat)" [ "$fd" = "3" ]
check "del removes them" kp -q del 'kpvm:*'
check "nothing left in kprobe_events" nothing_left

# 1b. A parameter in a return probe, through the DWARF: the kernel keeps
#     the arguments' registers for the return from Linux 6.9 ($argN); a
#     register read when the function returns would hold something else.
defs=$(kp -D 'vfs_read%return count' 2>&1)
echo "# $defs"
if grep -q 'kernel return probes support: $retval, $arg<N>' $tracefs/README; then
  check "a DWARF parameter in a return probe is the argument the kernel kept" \
    [ "$defs" = 'r:probe/vfs_read__return vfs_read+0 count=$arg3:u64' ]
else
  check "a DWARF parameter in a return probe is refused by -D before Linux 6.9, naming trace and hist" \
    eval 'grep -q "cannot keep a function.s arguments for its return probe (\$argN, Linux 6.9)" <<<"$defs" &&
      grep -q "hint: .kprobectl trace --probe. and .kprobectl hist --probe. can" <<<"$defs"'
fi
# 1c. trace keeps them on every kernel: the kernel's $argN from 6.9, before
#     it a hidden entry probe of kprobectl's, paired by thread and stack
#     pointer. Each return of cat's reads has the count its entry had (the
#     entry traced too), and the read of the 10-byte file returned 10.
kp trace -q -o /tmp/kpvm-rc --probe 'kpvm:e=vfs_read count' --probe 'kpvm:r=vfs_read%return count $retval' -- \
  cat /tmp/kpvm-file >/dev/null 2>&1
grep -m2 'kpvm:r__return:' /tmp/kpvm-rc | sed 's/^/# /'
pairs=$(awk '/kpvm:e:/ { split($0, a, " count="); c[$1] = a[2] }
             /kpvm:r__return:/ { split($0, a, " count="); split(a[2], b, " "); n++; if (c[$1] != b[1]) bad++
                                 if (/ retval=10$/) ten++ }
             END { print n + 0, bad + 0, ten + 0 }' /tmp/kpvm-rc)
echo "# returns, mismatches, returns of 10: $pairs"
check "each return probe's count is its entry's, and one read returned the file's 10 bytes" \
  awk -v p="$pairs" 'BEGIN { split(p, x, " "); exit !(x[1] > 0 && x[2] == 0 && x[3] > 0) }'
check "nothing left after the return probes" nothing_left

# 2. A duplicated static function: one probe per instance, distinct
#    addresses, and they fire (/proc/cpuinfo and /proc/crypto each have a c_start).
defs=$(kp -D c_start 2>&1)
echo "$defs" | sed 's/^/# /'
# (three in 6.1, four in 6.12)
instances=$(grep -c " $text+" <<<"$defs")
check "c_start has several instances at $text offsets" [ "$instances" -ge 3 ]
check "the offsets differ" [ "$(awk '{print $2}' <<<"$defs" | sort -u | wc -l)" -eq "$instances" ]
kp trace -q -o /tmp/kpvm-c --probe 'kpvm:c=c_start' -- sh -c 'cat /proc/cpuinfo /proc/crypto >/dev/null'
fired=$(sed -n 's/.*kpvm:\(c[_0-9]*\): .*/\1/p' /tmp/kpvm-c | sort -u | wc -l)
check "two different instances fired" [ "$fired" -ge 2 ]
grep -o 'kpvm:c[_0-9]*: ([^)]*)' /tmp/kpvm-c | sort -u | sed 's/^/# /'
check "nothing left after trace --probe" nothing_left
# Of s_show's instances (four on x86-64's 7.3, two on arm64's 6.12) those
# in kernel/trace are notrace (one before 7.x, two since): left out, with a
# word. ftrace's own list says how many it can trace.
defs=$(kp -D s_show 2>/tmp/kpvm-err)
instances=$(grep -c ' s_show$' /proc/kallsyms)
traceable=$(grep -c '^s_show$' $tracefs/available_filter_functions)
echo "# s_show: $instances instances, $traceable in available_filter_functions"
check "the notrace instances of a duplicated static are left out, the other $traceable kept" \
  [ "$(grep -c " $text+" <<<"$defs")" -eq "$traceable" -a "$instances" -gt "$traceable" -a "$traceable" -ge 1 ]
check "and kprobectl says which" \
  [ "$(grep -c "left out s_show of .*kernel/trace/.*ftrace cannot trace it" /tmp/kpvm-err)" -eq $((instances - traceable)) ]

# funcs finds the running kernel's image too, and leaves out what cannot be probed.
funcs=$(kp funcs "vfs_rea? | t_show | $blacklisted" 2>&1)
check "funcs lists vfs_read and leaves out notrace and blacklisted functions" [ "$funcs" = "vfs_read" ]

# 3. Refusals: each a clear error, nothing written.
refuse() {  # refuse DESCRIPTION EXPECTED-MESSAGE-PATTERN SPEC...
  local what=$1 pattern=$2; shift 2
  local err
  err=$(kp add "$@" 2>&1)
  local status=$?
  if [ $status -ne 0 ] && grep -q -- "$pattern" <<<"$err" && nothing_left; then ok "$what"
  else not_ok "$what" "exit $status" "$err"; fi
}
refuse "a blacklisted function is refused" "on the kernel's kprobe blacklist" "kpvm:x=$blacklisted"
refuse "a notrace function is refused before the kernel says 'Failed to register'" "ftrace cannot trace it" 'kpvm:x=t_show'
refuse "a variable not available at that line is refused" "has no location at\|no variable" "kpvm:x=do_sys_openat2:2 $open_var"
refuse "an unknown function is refused" "no function 'no_such_function_kp'" 'kpvm:x=no_such_function_kp'
refuse "a later definition's failure takes back the earlier ones" "" -a 'kpvm:ok=vfs_read' -a 'kpvm:bad=no_such_function_kp'
# A vmlinux that is not the running kernel's: the test fixture stands in.
refuse "a build-id mismatch is refused, naming both ids" "build-id is .*, the running kernel's" -k "$build/tests/fixtures/kernel_like" 'kpvm:x=process'

# 4. A module: found by name where Debian puts its debuginfo, probed as
#    MOD:SYMBOL+OFF, with a member of a struct; it fires when a device is made.
mkdir -p /lib/modules
ln -sfn "$module_dir" "/lib/modules/$release"
mkdir -p /usr/lib/debug/lib/modules
ln -sfn "$tree/usr/lib/debug/lib/modules/$release" "/usr/lib/debug/lib/modules/$release"
# kmod may not be installed, and busybox's insmod reads no .ko.xz (6.12's).
dummy=$(ls /lib/modules/$release/kernel/drivers/net/dummy.ko* | head -1)
case "$dummy" in
  *.xz) xz -dc "$dummy" >/tmp/kpvm-dummy.ko && dummy=/tmp/kpvm-dummy.ko ;;
  *.zst) zstd -qdc "$dummy" >/tmp/kpvm-dummy.ko && dummy=/tmp/kpvm-dummy.ko ;;
esac
# 4a. A module that is not loaded yet, named as modules.dep knows it: the
#     kernel keeps MOD:SYMBOL+OFF and arms it when the module loads. A line
#     of dummy_init_one, inlined into the module's init function
#     (.init.text, gone once it returns), with a member of the device it
#     registered: each of numdummies=2 devices, by name.
check "dummy is not loaded yet" [ ! -e /sys/module/dummy ]
#     The line (tests/vm/kernel_answers.sh) is the first where err, what
#     register_netdevice() returned, is there with the device, which has
#     its name then; where none is (arm64's gcc keeps dev_dummy no
#     further than that call), the last with the device, whose name is
#     still the template.
if [ "$init_err" = 1 ]; then
  init=("kpvm:init=dummy_init_one:$init_line name=dev_dummy->name:string err" 'name err' 'name="dummy[01]" err=0')
else
  init=("kpvm:init=dummy_init_one:$init_line name=dev_dummy->name:string" 'name' 'name="dummy%d"')
fi
out=$(kp add -m dummy "${init[0]}" 2>&1)
echo "$out" | sed 's/^/# /'
check "a probe on a module not loaded yet is added" \
  grep -Eq '^p:kpvm/init dummy:init_module\+[0-9]* name=\+[0-9]*\(%[a-z0-9]*\):string( err=%[a-z0-9]*:s32)?$' $tracefs/kprobe_events
check "... and kprobectl says it waits for the module" grep -q 'module dummy is not loaded: its probes wait for it' <<<"$out"
listed=$(kp list 'kpvm:init' 2>&1)
echo "$listed" | sed 's/^/# /'
check "list shows it waiting for its module" grep -q "kpvm:init	(on init_module+[0-9]* in dummy with ${init[1]}).*\[waiting for module dummy to load\]" <<<"$listed"
kp trace -q -o /tmp/kpvm-init 'kpvm:init' -- busybox insmod "$dummy" numdummies=2
sed 's/^/# /' /tmp/kpvm-init
# Where it fired is printed from kallsyms once the module's init code is
# gone (6.12 names it after whatever now precedes it): the values tell.
[ "$(grep -c "kpvm:init: (.*) ${init[2]}\$" /tmp/kpvm-init)" -eq 2 ] &&
  ok "it fired in the module's init function, once per device, with its name" ||
  not_ok "it fired in the module's init function, once per device, with its name" "$(cat /tmp/kpvm-init)"
check "list no longer says it waits" eval '! kp list "kpvm:init" | grep -q waiting'
check "del removes it" kp -q del 'kpvm:init'
[ -e /sys/module/dummy ] || busybox insmod "$dummy"
defs=$(kp -m dummy -D 'dummy_dev_init name=dev->name:string' 2>&1)
echo "# $defs"
check "a module's probe is MOD:SYMBOL+OFF" \
  grep -q "^p:probe/dummy_dev_init dummy:dummy_dev_init+$entry name=+[0-9]*($arg1):string\$" <<<"$defs"
kp trace -q -o /tmp/kpvm-m -m dummy --probe 'kpvm:m=dummy_dev_init name=dev->name:string' -- ip link add kpvm0 type dummy
grep -q "kpvm:m: (dummy_dev_init+$at_entry \[dummy\]) name=\"kpvm0\"" /tmp/kpvm-m && ok "the module probe fired with the device's name" ||
  not_ok "the module probe fired with the device's name" "$(cat /tmp/kpvm-m)"
ip link del kpvm0 2>/dev/null
defs=$(kp -m veth -D 'veth_open' 2>&1)
echo "# $defs"
check "a module that is not loaded (veth) gets a definition that waits for it" \
  grep -q "^p:probe/veth_open veth:veth_open+$entry\$" <<<"$defs"
refuse "... but not an fprobe, which cannot wait" "only a kprobe waits for a module to load" --fprobe -m veth 'kpvm:x=veth_open'
check "nothing left after the module probes" nothing_left

# 5. Symbol-level probes with --maxactive, and hits in list.
check "a return probe with --maxactive" kp -q --maxactive 16 add 'kpvm:r=vfs_read%return $retval'
cat /etc/hostname >/dev/null
grep -q '^r16:kpvm/r__return' $tracefs/kprobe_events && ok "r16: written" || not_ok "r16: written" "$(cat $tracefs/kprobe_events)"
kp -q del 'kpvm:*'
check "nothing left at the end" nothing_left

# 6. gcc's split functions, fired. do_exit is split hot/cold: its entry
#    and parameter (exit(3) is code 3 << 8).
kp trace -q -o /tmp/kpvm-x --probe 'kpvm:x=do_exit code' -- sh -c 'exit 3'
grep -q "kpvm:x: (do_exit+$at_entry) code=768\$" /tmp/kpvm-x && ok "a hot/cold split function's entry fires with its parameter" ||
  not_ok "a hot/cold split function's entry fires with its parameter" "$(cat /tmp/kpvm-x)"
# d_same_name holds its own split part inlined back (6.1 on): one probe,
# so one event per call, as many as its returns. Where it is inlined into
# every caller (5.10: no symbol), it has no return to probe, and kprobectl
# says so.
if grep -q ' d_same_name$' /proc/kallsyms; then
  kp trace -q -o /tmp/kpvm-d --probe 'kpvm:d=d_same_name' --probe 'kpvm:d=d_same_name%return' -- \
    sh -c 'for i in 1 2 3; do ls -l /proc/self/ /usr/lib /etc >/dev/null; done'
  entries=$(grep -c 'kpvm:d: ' /tmp/kpvm-d)
  returns=$(grep -c 'kpvm:d__return: ' /tmp/kpvm-d)
  [ "$entries" -gt 0 ] && [ "$entries" -eq "$returns" ] && ok "one event per call of d_same_name ($entries calls)" ||
    not_ok "one event per call of d_same_name" "entries $entries, returns $returns"
else
  err=$(kp -D 'd_same_name%return' 2>&1)
  echo "# $err"
  check "d_same_name, inlined everywhere (no symbol): its return probe is refused, saying why" \
    grep -q "d_same_name exists only as inlined copies here, and an inlined copy has no return to probe" <<<"$err"
fi
# getname_flags is split by partial inlining: getname_flags.part.0 is
# entered from its head only (out of line, or inlined into getname), so it
# gets no probe, and an out-of-line call is one entry and one return (a
# probe on the part fired a second entry and a second return).
# (5.10 enters it out of line from mkdir, rename and unlinkat only.)
kp trace -q -o /tmp/kpvm-g --probe 'kpvm:g=getname_flags' --probe 'kpvm:g=getname_flags%return' -- \
  sh -c 'for i in 1 2 3; do stat /etc/hostname /proc/self >/dev/null; mkdir /tmp/kpvm-gd; mv /tmp/kpvm-gd /tmp/kpvm-ge
                            rm -r /tmp/kpvm-ge; done'
heads=$(grep -c "kpvm:g\\(_[0-9]*\\)\\?: (getname_flags+$at_entry)" /tmp/kpvm-g)
returns=$(grep -c 'kpvm:g__return: ' /tmp/kpvm-g)
[ "$heads" -gt 0 ] && [ "$heads" -eq "$returns" ] && ! grep -q '\.part' /tmp/kpvm-g &&
  ok "a function split by partial inlining: one entry and one return per call ($heads calls)" ||
  not_ok "a function split by partial inlining: one entry and one return per call" "heads $heads, returns $returns" \
    "$(grep '\.part' /tmp/kpvm-g | head -3)"
# $params at an inlined copy are the function's own: rw_verify_area inlined
# into kernel_read (6.1), which exec uses to read a binary's first 256
# bytes. (6.12 keeps it out of line: its own events then.)
kp trace -q -o /tmp/kpvm-r --probe 'kpvm:r=rw_verify_area $params' -- /bin/true
inlined=$(grep '(kernel_read+' /tmp/kpvm-r | head -1)
[ -n "$inlined" ] || inlined=$(grep 'kpvm:r: ' /tmp/kpvm-r | grep ' count=256' | head -1)
echo "# $inlined"
fine=0
# kernel_read's own parameters (buf, pos) must not be there.
grep -q ' read_write=0' <<<"$inlined" && grep -q ' count=256' <<<"$inlined" &&
  ! grep -q ' buf=\| pos=' <<<"$inlined" && fine=1
[ $fine -eq 1 ] && ok "\$params at an inlined copy: its own parameters, with their values" ||
  not_ok "\$params at an inlined copy: its own parameters, with their values" "$(head -5 /tmp/kpvm-r)"
check "nothing left after the split-function probes" nothing_left

# 6b. A struct passed by value in two registers (DW_OP_piece): setsockopt's
#     sockptr_t optval reaches do_tcp_setsockopt in RCX (the pointer) and R8
#     (is_kernel, bit 0) on x86-64, in X3 and X4 on arm64 (AAPCS64: a
#     16-byte composite in two registers). A program passes a buffer whose
#     address it prints.
setsockopt='import ctypes, socket
libc = ctypes.CDLL(None)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
one = ctypes.c_int(1)
print("user=0x%x rc=%d" % (ctypes.addressof(one), libc.setsockopt(s.fileno(), 6, 1, ctypes.byref(one), 4)))'
# Where a piece is computed by the DWARF (the host's gdb found one: 5.10's
# arm64 keeps is_kernel as (x4 << 7) >> 7), no fetcharg reads it:
# kprobectl must refuse that member and say why.
members='optval.user optval.is_kernel' expect_kernel=' is_kernel=0'
if [ "$optval_computed" = 1 ]; then
  members='optval.user' expect_kernel=''
  err=$(kp -D 'do_tcp_setsockopt optval.is_kernel' 2>&1)
  echo "# $err"
  check "optval.is_kernel, computed by its DWARF: refused, naming the operation" \
    grep -q "the piece of 'optval' at bit 64 is in a place the kernel cannot read (its location uses DW_OP_" <<<"$err"
fi
kp trace -q -o /tmp/kpvm-so --probe "kpvm:so=do_tcp_setsockopt optname $members optlen" \
  --probe 'kpvm:sp=do_tcp_setsockopt $params' -- /usr/bin/python3 -c "$setsockopt" >/tmp/kpvm-so.out
echo "# $(cat /tmp/kpvm-so.out)"
grep 'kpvm:s[op]:' /tmp/kpvm-so | head -2 | sed 's/^/# /'
user=$(sed -n 's/^user=\(0x[0-9a-f]*\) rc=0$/\1/p' /tmp/kpvm-so.out)
# Where the probe is: do_tcp_setsockopt's entry, or its copy inlined into
# tcp_setsockopt (5.10), as kprobectl wrote it.
at=$(kp -D do_tcp_setsockopt 2>/dev/null | awk 'NR == 1 { print $2 }')
if [ "${at##*+}" = "$entry" ]; then where="${at%+*}+$at_entry"; else where="${at%+*}+$(printf 0x%x "${at##*+}")"; fi
check "a member of a struct in two registers is the pointer the program passed${expect_kernel:+,$expect_kernel} (at $at)" \
  grep -q "kpvm:so: ($where) optname=1 user=$user$expect_kernel optlen=4\$" /tmp/kpvm-so
# An inlined copy's parameters come in the order its DWARF has them.
params=$(grep -m1 'kpvm:sp: ' /tmp/kpvm-so)
check "\$params takes the struct's members${expect_kernel:+ (is_kernel where it can)}" \
  eval '[[ "$params " = *" optval_user=$user "* && "$params " = *" optlen=4 "* ]] &&
    if [ -n "$expect_kernel" ]; then [[ "$params " = *" optval_is_kernel=0 "* ]]; else [[ "$params" != *is_kernel* ]]; fi'
check "nothing left after the struct in registers" nothing_left

# 7. fprobe events (Linux 6.5+, found from the tracefs README): --fprobe
#    writes f: definitions to dynamic_events; entry and exit fire with
#    their values, and nothing is left. On a kernel without them, a clear
#    refusal.
if grep -q 'f\[:\[<group>/\]\[<event>\]\]\|f\[maxactive\]' $tracefs/README; then
  kp --fprobe -q add 'kpvm:f=vfs_read count' &&
    kp --fprobe -q add 'kpvm:f=vfs_read%return ret=$retval'
  check "--fprobe adds entry and exit fprobes" grep -q '^f:kpvm/f vfs_read' $tracefs/dynamic_events
  listed=$(kp list 'kpvm:*' 2>&1)
  echo "$listed" | sed 's/^/# /'
  check "list shows the fprobes" [ "$(grep -c 'kpvm:f' <<<"$listed")" -eq 2 ]
  kp trace -q -o /tmp/kpvm-f 'kpvm:*' -- cat /tmp/kpvm-file >/dev/null
  grep 'kpvm:f' /tmp/kpvm-f | head -4 | sed 's/^/# /'
  check "the entry fprobe fired with count" grep -q 'kpvm:f: (vfs_read+0x[0-9a-f]*) count=[0-9]' /tmp/kpvm-f
  check "the exit fprobe fired with the return value" grep -q 'kpvm:f__return: (.* <- vfs_read) ret=' /tmp/kpvm-f
  check "del removes the fprobes" kp -q del 'kpvm:*'
  check "nothing left in dynamic_events" [ -z "$(grep kpvm $tracefs/dynamic_events)" ]
  kp trace -q -o /tmp/kpvm-f2 --fprobe --probe 'kpvm:g=vfs_read%return ret=$retval' -- cat /tmp/kpvm-file >/dev/null
  check "trace --probe with --fprobe fires and cleans up" grep -q 'kpvm:g__return: ' /tmp/kpvm-f2
  check "nothing left after trace --fprobe" [ -z "$(grep kpvm $tracefs/dynamic_events)" ] && nothing_left
  # 12 sleeps in flight at once: a kretprobe keeps at most maxactive (here
  # 2) returns pending and misses the rest; an fprobe exit misses none.
  sleeps='for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait'
  kp --maxactive 2 trace -o /tmp/kpvm-l1 --latency --probe 'kpvm:s=hrtimer_nanosleep%return' -- sh -c "$sleeps" \
    2>/tmp/kpvm-l1.err >/dev/null
  sed 's/^/# /' /tmp/kpvm-l1.err | grep 'events printed'
  check "trace --latency with kretprobes (maxactive 2) says it missed returns of 12 concurrent sleeps" \
    grep -q 'return probes missed: kpvm:s__return [0-9]' /tmp/kpvm-l1.err
  kp --fprobe trace -o /tmp/kpvm-l2 --latency --probe 'kpvm:s=hrtimer_nanosleep%return' -- sh -c "$sleeps" \
    2>/tmp/kpvm-l2.err >/dev/null
  sed 's/^/# /' /tmp/kpvm-l2.err | grep 'events printed'
  check "trace --latency with fprobe exits misses none and pairs all 12" \
    eval '! grep -q missed /tmp/kpvm-l2.err && [ "$(grep -c "kpvm:s__return: .*latency" /tmp/kpvm-l2)" -ge 12 ]'
  check "nothing left after the latency traces" [ -z "$(grep kpvm $tracefs/dynamic_events)" ] && nothing_left
else
  err=$(kp --fprobe -D 'vfs_read' 2>&1)
  echo "# $err"
  check "--fprobe on a kernel without fprobe events is refused" grep -q 'this kernel has no fprobe events' <<<"$err"
fi

# 8. Tracepoint probes (t: in dynamic_events, Linux 6.5+): tp:NAME with
#    the tracepoint's arguments by name and their members, read by the
#    kernel through its BTF. They fire on exec, and nothing is left.
if grep -q 't\[:\[<group>/\]\[<event>\]\]' $tracefs/README; then
  kp -q add 'kpvm:tp=tp:sched_process_exec p->pid old_pid file=bprm->filename:string'
  check "tp: adds a tracepoint probe" grep -q '^t:kpvm/tp sched_process_exec' $tracefs/dynamic_events
  listed=$(kp list 'kpvm:*' 2>&1)
  echo "$listed" | sed 's/^/# /'
  check "list shows the tracepoint probe" grep -q 'kpvm:tp' <<<"$listed"
  kp trace -q -o /tmp/kpvm-tp 'kpvm:*' -- /bin/true >/dev/null
  grep 'kpvm:tp' /tmp/kpvm-tp | head -2 | sed 's/^/# /'
  check "the tracepoint probe fired with the pid and the file" \
    grep -q 'kpvm:tp: .*pid=[1-9][0-9]* old_pid=[1-9][0-9]* file="/bin/true"' /tmp/kpvm-tp
  rc=0
  err=$(kp -q add 'kpvm:tq=tp:sched_process_exec no_such_arg' 2>&1) || rc=$?
  echo "$err" | sed 's/^/# /'
  check "an argument the tracepoint does not have is an error" [ $rc -ne 0 ]
  check "... and nothing of it is written" [ -z "$(grep 'kpvm/tq' $tracefs/dynamic_events)" ]
  check "del removes the tracepoint probe" kp -q del 'kpvm:*'
  check "nothing left after the tracepoint probes" [ -z "$(grep kpvm $tracefs/dynamic_events)" ] && nothing_left
else
  err=$(kp -D 'tp:sched_switch' 2>&1)
  echo "# $err"
  check "tp: on a kernel without tracepoint probes is refused" grep -q 'this kernel has no tracepoint probes' <<<"$err"
fi

# 9. No kernel DWARF, as on most machines: the parameters and types come
#    from the kernel's BTF (/sys/kernel/btf), a module's split over it. The
#    debuginfo is hidden; the values are checked in the trace.
if [ -r /sys/kernel/btf/vmlinux ]; then
  rm -f "/usr/lib/debug/boot/vmlinux-$release" "/usr/lib/debug/lib/modules/$release"
  defs=$(kp -D 'vfs_read buf count' 2>&1; kp -D 'vfs_read%return $retval' 2>&1)
  echo "$defs" | sed 's/^/# /'
  check "without DWARF, parameters typed from BTF" \
    grep -qx "p:probe/vfs_read vfs_read+0 buf=$arg2:x64 count=$arg3:u64" <<<"$defs"
  check "... and a typed \$retval" grep -qx 'r:probe/vfs_read__return vfs_read+0 retval=$retval:s64' <<<"$defs"
  kp trace -q -o /tmp/kpvm-btf --probe 'kpvm:br=vfs_read name=file->f_path.dentry->d_name.name:string count' \
    --probe 'kpvm:bx=vfs_read%return $retval' -- cat /tmp/kpvm-file >/dev/null
  grep -E 'kpvm-file|retval=10$' /tmp/kpvm-btf | head -3 | sed 's/^/# /'
  check "a member chain through four structs read the dentry's name" \
    grep -q 'kpvm:br: .* name="kpvm-file" count=[1-9][0-9]*$' /tmp/kpvm-btf
  check "the typed \$retval is the bytes cat read (10)" grep -q 'kpvm:bx__return: .* retval=10$' /tmp/kpvm-btf
  vars=$(kp vars vfs_read 2>&1)
  echo "$vars" | sed 's/^/# /'
  check "vars lists the parameters BTF knows" grep -q 'struct file\*	file' <<<"$vars"
  # do_sys_openat2, where the image's BTF has it (the host read it:
  # arm64's 5.10 has none, its calling convention changed).
  if [ "$btf_openat2" = 1 ]; then
    kp trace -q -o /tmp/kpvm-btf --probe 'kpvm:bo=do_sys_openat2 filename:string how->flags' -- \
      cat /tmp/kpvm-file >/dev/null
    grep -m1 'kpvm-file' /tmp/kpvm-btf | sed 's/^/# /'
    check "without DWARF, a parameter and a member from BTF: the file name and the flags" \
      grep -q "kpvm:bo: (do_sys_openat2+$btf_at_entry) filename=\"/tmp/kpvm-file\" flags=$o_largefile\$" /tmp/kpvm-btf
  else
    err=$(kp -D 'do_sys_openat2 filename:string' 2>&1)
    echo "# $err"
    check "do_sys_openat2, not in this kernel's BTF: kprobectl says so" \
      grep -q "no function 'do_sys_openat2' in the BTF of /sys/kernel/btf/vmlinux" <<<"$err"
  fi
  check "funcs without DWARF: BTF's functions ftrace can trace" [ "$(kp funcs 'vfs_rea[d]' 2>&1)" = vfs_read ]
  if [ -r /sys/kernel/btf/dummy ]; then
    kp trace -q -o /tmp/kpvm-bm -m dummy --probe 'kpvm:bm=dummy_dev_init name=dev->name:string' -- \
      ip link add kpvm1 type dummy
    ip link del kpvm1 2>/dev/null
    check "a module's probe from its split BTF fired with the device's name" \
      grep -q "kpvm:bm: (dummy_dev_init+$btf_at_entry \[dummy\]) name=\"kpvm1\"" /tmp/kpvm-bm
  fi
  err=$(kp -D 'do_sys_openat2:3 dfd' 2>&1)
  check "a line probe without DWARF says it needs it" grep -q "needs the kernel's DWARF" <<<"$err"
  # A wrong name, without DWARF: every command says so, with the nearest
  # names, before it writes anything.
  for cmd in "add kpvm:x=vfs_raed" "-D vfs_raed" "trace -q --probe kpvm:x=vfs_raed -- true" "vars vfs_raed" \
    "line vfs_raed" "-D vfs_raed:3" "funcs vfs_raed"; do
    # shellcheck disable=SC2086 # the command's words
    err=$(kp $cmd 2>&1)
    status=$?
    if [ $status -ne 0 ] && grep -q "no function 'vfs_raed' in the running kernel" <<<"$err" &&
      grep -q 'similar names: .*vfs_read' <<<"$err" && nothing_left; then ok "kprobectl $cmd: no function, the nearest names"
    else not_ok "kprobectl $cmd: no function, the nearest names" "exit $status" "$err"; fi
  done
  if grep -q 'kernel return probes support: $retval, $arg<N>' $tracefs/README; then
    check "a parameter in a return probe (Linux 6.9+)" \
      [ "$(kp -D 'vfs_read%return count' 2>&1)" = 'r:probe/vfs_read__return vfs_read+0 count=$arg3:u64' ]
  else
    err=$(kp -D 'vfs_read%return count' 2>&1)
    check "a parameter in a return probe is refused before Linux 6.9" grep -q 'cannot keep a function.s arguments' <<<"$err"
  fi
  check "nothing left after the BTF probes" nothing_left
else
  echo "# no /sys/kernel/btf/vmlinux: BTF probes not tested"
fi

# 10. Event probes (e: in dynamic_events): a probe on an existing event that
#     reads its fields by name, typed from its format; pointer fields' members
#     through BTF (a syscall's user memory, a kernel pointer typed by the
#     tracepoint's prototype, a void * through a cast). Each value checked
#     against what the program did or the event's own copy of it.
# The README lists e: from Linux 5.15, which brought event probes; the
# kernel's config, where kprobectl finds one, says whether this one takes
# them (CONFIG_EPROBE_EVENTS since 6.17).
if grep -q '<attached-group>.<attached-event>' $tracefs/README; then
  ip link set lo up
  kp -q add 'kpvm:open=ev:syscalls:sys_enter_openat filename dfd' &&
    kp -q add 'kpvm:raw=ev:syscalls:sys_enter_openat p=filename:x64' &&
    kp -q add 'kpvm:sleep=ev:syscalls:sys_enter_clock_nanosleep rqtp->tv_sec rqtp->tv_nsec' &&
    kp -q add 'kpvm:timer=ev:timer:timer_start timer->expires expires' &&
    kp -q add 'kpvm:q=ev:net:net_dev_queue skblen=((struct sk_buff *)skbaddr)->len len'
  check "event probes added" [ "$(grep -c '^e:kpvm/' $tracefs/dynamic_events)" -eq 5 ]
  grep '^e:kpvm/' $tracefs/dynamic_events | sed 's/^/# /'
  listed=$(kp list 'kpvm:*' 2>&1)
  check "list shows an event probe with its event" grep -q 'kpvm:open	(on syscalls:sys_enter_openat with filename dfd)' <<<"$listed"
  # busybox's ping: in the arm64 guest, /usr/bin/ping is the host's (x86-64).
  kp trace -q -o /tmp/kpvm-e -a 'kpvm:*' -- sh -c 'cat /tmp/kpvm-file; sleep 1.25; busybox ping -c 1 127.0.0.1' >/dev/null 2>&1
  grep -E 'kpvm:(open|raw)' /tmp/kpvm-e | grep -- "$(grep 'filename="/tmp/kpvm-file"' /tmp/kpvm-e | head -1 | awk '{print $1}')" |
    head -2 | sed 's/^/# /'
  if grep -q 'kpvm:raw: .* p=0x[0-9a-f]\{3,\}$' /tmp/kpvm-e; then
    check "the file name cat opened, read through the event's filename field" \
      grep -q 'kpvm:open: (syscalls.sys_enter_openat) filename="/tmp/kpvm-file" dfd=-100$' /tmp/kpvm-e
  else
    # Some kernels give an event probe a char * field's first byte only
    # (Debian's 6.12.95: p=0xb1; its 6.1.0-56 gives the whole pointer).
    ok "the file name cat opened # SKIP this kernel reads a char * field's first byte only: $(grep -m1 'kpvm:raw' /tmp/kpvm-e)"
  fi
  check "a member through a syscall's user pointer: the time sleep asked for" \
    grep -q 'kpvm:sleep: (syscalls.sys_enter_clock_nanosleep) tv_sec=1 tv_nsec=250000000$' /tmp/kpvm-e
  timers=$(awk '/kpvm:timer:/ { n++; split($0, a, " expires="); split(a[2], b, " expires_1="); if (b[1] != b[2]) bad++ }
                END { print n + 0, bad + 0 }' /tmp/kpvm-e)
  echo "# timer_start events, mismatches: $timers"
  check "a member through a void * typed by the tracepoint's prototype: timer->expires is the event's expires" \
    awk -v p="$timers" 'BEGIN { split(p, x, " "); exit !(x[1] > 0 && x[2] == 0) }'
  queued=$(awk '/kpvm:q:/ { n++; split($0, a, " skblen="); split(a[2], b, " len="); if (b[1] != b[2]) bad++ }
                END { print n + 0, bad + 0 }' /tmp/kpvm-e)
  echo "# net_dev_queue events, mismatches: $queued"
  check "a member through a cast: ((struct sk_buff *)skbaddr)->len is the event's len" \
    awk -v p="$queued" 'BEGIN { split(p, x, " "); exit !(x[1] > 0 && x[2] == 0) }'
  vars=$(kp vars ev:syscalls:sys_enter_clock_nanosleep 2>&1)
  echo "$vars" | sed 's/^/# /'
  check "vars lists the fields and where a pointer leads" \
    grep -q 'const struct __kernel_timespec \*	rqtp	$rqtp:x64	(->MEMBER of const struct __kernel_timespec)' <<<"$vars"
  erefuse() {  # erefuse DESCRIPTION EXPECTED-MESSAGE-PATTERN SPEC
    local err status
    err=$(kp add "$3" 2>&1)
    status=$?
    if [ $status -ne 0 ] && grep -q -- "$2" <<<"$err" && [ -z "$(grep kpvm/x $tracefs/dynamic_events)" ]; then ok "$1"
    else not_ok "$1" "exit $status" "$err"; fi
  }
  erefuse "an event probe on a field the event lacks is refused, naming the nearest" "has no field 'filname' (similar: filename)" \
    'kpvm:x=ev:syscalls:sys_enter_openat filname'
  erefuse "an event the kernel lacks is refused" "no event syscalls:sys_enter_opnat" 'kpvm:x=ev:syscalls:sys_enter_opnat'
  erefuse "a void * member without a type is refused" "what it points to is not known" 'kpvm:x=ev:net:net_dev_queue skbaddr->len'
  kp -q add 'kpvm:k=vfs_read'
  erefuse "an event probe on a kprobe event is refused" "attaches event probes to none of those" 'kpvm:x=ev:kpvm:k'
  check "del removes the event probes" kp -q del 'kpvm:*'
  check "nothing left after the event probes" [ -z "$(grep kpvm $tracefs/dynamic_events)" ] && nothing_left
else
  err=$(kp add 'kpvm:open=ev:syscalls:sys_enter_openat filename dfd' 2>&1)
  echo "# $err"
  check "an event probe on a kernel without them is refused, naming the first that has them" \
    eval 'grep -q "this kernel has no event probes (e: in dynamic_events, Linux 5.15" <<<"$err" &&
      grep -q "README lists no e:" <<<"$err" && [ -z "$(grep kpvm $tracefs/dynamic_events)" ]'
fi
# 11. What this kernel's fetchargs take (the README's list), each checked by
#     the value recorded where it is listed, else by kprobectl's refusal,
#     naming the first kernel that has it: $argN at an entry (kprobectl
#     writes the register, so any kernel), user memory (+u and :ustring,
#     Linux 5.5), :symstr (6.2), %pd and %pD (6.10); error_log (5.4).
listed_in_readme() { grep -qF -- "$1" $tracefs/README; }
kp trace -q -o /tmp/kpvm-ft --probe 'kpvm:n=vfs_read n=$arg3:u64 count' -- cat /tmp/kpvm-file >/dev/null
grep -m2 'kpvm:n: ' /tmp/kpvm-ft | sed 's/^/# /'
check "\$arg3 at vfs_read's entry is its count" \
  awk '/kpvm:n: / { n++; split($0, a, " n="); split(a[2], b, " count="); if (b[1] != b[2]) bad++ }
       END { exit !(n > 0 && bad == 0) }' /tmp/kpvm-ft
fetchtype() {  # fetchtype README-WORDS TYPE EVENT SPEC EXPECTED-TAIL FIRST-KERNEL
  local err
  if listed_in_readme "$1"; then
    kp trace -q -o /tmp/kpvm-ft --probe "kpvm:$3=$4" -- cat /tmp/kpvm-file >/dev/null
    grep "kpvm:$3: " /tmp/kpvm-ft | grep -m1 -F -- "$5" | sed 's/^/# /'
    check ":$2 fetches the value ($5)" grep -qF -- "$5" /tmp/kpvm-ft
  else
    err=$(kp -D "$4" 2>&1)
    echo "# $err"
    check ":$2 is refused, naming the first kernel that has it" \
      grep -qF "this kernel does not support the type '$2' ($6)" <<<"$err"
  fi
}
fetchtype 'ustring' ustring u 'do_sys_openat2 f=+0($arg2):ustring c=+u0($arg2):u8' 'f="/tmp/kpvm-file" c=47' \
  'ustring, Linux 5.5'
# The file's read_iter, as a symbol's name (symstr) and as an address (symbol).
fetchtype 'symstr' symstr s 'vfs_read op=file->f_op->read_iter:symstr a=file->f_op->read_iter:symbol' \
  'op="' 'symstr, Linux 6.2'
if listed_in_readme symstr; then
  check ":symstr and :symbol name the same function" \
    awk '/kpvm:s: / { split($0, a, " op=\""); split(a[2], b, "\" a="); sub(/\+.*/, "", b[1]); sub(/\+.*/, "", b[2])
                      n++; if (b[1] == "" || b[1] != b[2]) bad++ }
         END { exit !(n > 0 && bad == 0) }' /tmp/kpvm-ft
fi
fetchtype '%pd/%pD' '%pD' p 'vfs_read f=file:%pD d=file->f_path.dentry:%pd' 'f="kpvm-file" d="kpvm-file"' \
  '%pd/%pD, Linux 6.10'
echo 'p:kpvm/x no_such_function_kp' >>$tracefs/kprobe_events 2>/dev/null
echo "# error_log: $(tail -2 $tracefs/error_log 2>&1 | tr '\n' ' ')"
check "error_log says why the kernel refused a definition" grep -q 'trace_kprobe: error: ' $tracefs/error_log
check "nothing left after the fetch types" nothing_left

# arm64's own rules, its offline answers against the host's, user space.
# shellcheck source=arm64_probes.sh
[ "$arch" != aarch64 ] || . "$(dirname "$0")/arm64_probes.sh"

# The guest kernel's own complaints while all this ran.
problems=$(dmesg | grep -E 'BUG:|WARNING:|Oops|soft lockup|blocked for more than' || true)
[ -z "$problems" ] && ok "the kernel reported no bug, warning or lockup" ||
  not_ok "the kernel reported no bug, warning or lockup" "$problems"

finish
