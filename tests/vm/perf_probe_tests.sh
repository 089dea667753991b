#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# perf's own probe tests (tools/perf/tests/shell: base_probe/test_basic.sh,
# test_invalid_options.sh, test_line_semantics.sh, test_adding_kernel.sh,
# test_adding_blacklisted.sh, lib/probe_vfs_getname.sh and the tests that
# use it, record+probe_libc_inet_pton.sh, test_uprobe_from_different_cu.sh),
# ported to kprobectl: each check is named after perf's test and what it
# checks, in kprobectl's words where kprobectl says things its own way (its
# messages; perf stat and perf record + script are kprobectl trace, perf
# list is kprobectl list; README, "perf's probe tests"). Runs inside the VM
# (tests/vm/run), as root.
# Usage: perf_probe_tests.sh BUILD_DIR VMLINUX [SOURCE_TREE [PERF]]
#   SOURCE_TREE: the kernel's source (scripts/vm --kernel-source), for the
#   -L getname_flags listing vfs_getname is found in; without it those
#   checks are skipped. PERF: the kernel's own perf (scripts/kernel-perf),
#   whose -L the line found is compared with; without it that check is
#   skipped.
set -u
build=$1
vmlinux=$2
source_tree=${3:-}
perf=${4:-}
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
man_page=$(dirname "$0")/../../man/kprobectl.8
logs=$(mktemp -d /tmp/kpvm-perf.XXXXXX)
# perf's clear_all_probes: nothing enabled, no kprobe, no uprobe.
clear_all_probes() {
  echo 0 >$tracefs/events/enable
  echo >$tracefs/kprobe_events
  echo >$tracefs/uprobe_events
}
# check_all_patterns_found.pl: every extended regex matches some line of FILE.
all_found() {
  local file=$1 re
  shift
  for re in "$@"; do grep -Eq -- "$re" "$file" || return 1; done
}
# check_all_lines_matched.pl: FILE has lines, and every one matches one of
# the regexes.
all_matched() {
  local file=$1 re args=()
  shift
  for re in "$@"; do args+=(-e "$re"); done
  [ -s "$file" ] && ! grep -Evx "${args[@]}" "$file" | grep -q .
}
# What a check's log holds, shown when it fails.
show() { sed 's/^/  /' "$1" | head -"${2:-8}"; }
# A command that must fail saying so: its exit status and what it said.
fails_saying() {  # fails_saying DESCRIPTION STATUS FILE REGEX...
  local what=$1 rc=$2 file=$3
  shift 3
  if [ "$rc" -ne 0 ] && all_found "$file" "$@"; then ok "$what"; else not_ok "$what" "exit $rc" "$(show "$file")"; fi
}
echo "# kernel $release; perf's probe tests, ported"
clear_all_probes

# --- base_probe/test_basic.sh ---------------------------------------------

kp --help >$logs/help 2>&1
check "test_basic: help message (perf's options are there)" all_found $logs/help vmlinux module source verbose \
  quiet 'add' 'del' 'list.*EVENT' 'line' 'vars' externs no-inlines 'funcs.*FILTER' 'filter' force dry-run \
  max-probes exec demangle-kernel
# perf --help shows the man page; kprobectl's is man/kprobectl.8.
check "test_basic: help message (the manual's sections)" all_found "$man_page" '^\.SH NAME' '^\.SH SYNOPSIS' \
  '^\.SH DESCRIPTION' '^\.SH OPTIONS' '^\.SH PROBE POINTS' '^\.SH ARGUMENTS' '^\.SH EXAMPLES' '^\.SH SEE ALSO'
kp 2>$logs/usage >/dev/null
check "test_basic: usage message (without arguments, on stderr)" all_found $logs/usage '[Uu]sage' kprobectl \
  verbose quiet add del force line vars externs range
kp --quiet --add vfs_read >$logs/quiet1.log 2>$logs/quiet1.err
rc=$?
kp --quiet --del vfs_read >$logs/quiet2.log 2>$logs/quiet2.err
rc=$((rc + $?))
if [ $rc -eq 0 ] && [ "$(cat $logs/quiet*.log $logs/quiet*.err | wc -l)" -eq 0 ]; then
  ok "test_basic: quiet switch (--quiet --add, --quiet --del print nothing)"
else
  not_ok "test_basic: quiet switch (--quiet --add, --quiet --del print nothing)" "exit $rc" \
    "$(cat $logs/quiet*.log $logs/quiet*.err)"
fi

# --- base_probe/test_invalid_options.sh -----------------------------------

for opt in -a -d -L -V; do
  kp $opt 2>$logs/missing.err
  fails_saying "test_invalid_options: missing argument for $opt" $? $logs/missing.err \
    "kprobectl: error: switch $opt requires a value"
done
for opt in -F -l; do
  kp $opt >/dev/null 2>$logs/unnecessary.err
  rc=$?
  if [ $rc -eq 0 ] && [ ! -s $logs/unnecessary.err ]; then
    ok "test_invalid_options: unnecessary argument for $opt"
  else
    not_ok "test_invalid_options: unnecessary argument for $opt" "exit $rc" "$(head -3 $logs/unnecessary.err)"
  fi
done
for opt in '-a xxx -d xxx' '-a xxx -L foo' '-a xxx -V foo' '-a xxx -l' '-a xxx -F' '-d xxx -L foo' \
  '-d xxx -V foo' '-d xxx -l' '-d xxx -F' '-L foo -V bar' '-L foo -l' '-L foo -F' '-V foo -l' '-V foo -F' '-l -F'; do
  # shellcheck disable=SC2086
  kp $opt >/dev/null 2>$logs/exclusive.err
  fails_saying "test_invalid_options: mutually exclusive options :: $opt" $? $logs/exclusive.err \
    '^kprobectl: error: switch .+ cannot be used with switch .+'
done

# --- base_probe/test_line_semantics.sh ------------------------------------
# perf says "Semantic error" for a range it cannot parse; kprobectl says
# "invalid line range" and points a caret at the bad part. Ranges that
# parse may still name nothing ("no function 'func'"): not a syntax error.

for desc in func func:10 func:0-10 func:2+10 func@source.c func@source.c:1 source.c:1 source.c:1+1 source.c:1-10; do
  kp --line "$desc" >$logs/line 2>&1
  if ! grep -q 'invalid line range' $logs/line; then ok "test_line_semantics: acceptable descriptions :: $desc"
  else not_ok "test_line_semantics: acceptable descriptions :: $desc" "$(cat $logs/line)"; fi
done
for desc in 'func:foo' 'func:1-foo' 'func:1+foo' 'func;lazy*pattern'; do
  kp --line "$desc" >$logs/line 2>&1
  if grep -q '^kprobectl: error: invalid line range' $logs/line && grep -q '^ *\^$' $logs/line; then
    ok "test_line_semantics: unacceptable descriptions :: $desc"
  else
    not_ok "test_line_semantics: unacceptable descriptions :: $desc" "$(cat $logs/line)"
  fi
done
# The issue's: a function in a file, a '.' and a '/' after its '@'.
for desc in getname_flags@fs/namei.c getname_flags@fs/namei.c:1; do
  kp --line "$desc" >$logs/line 2>/dev/null
  first=0
  [[ $desc == *:* ]] && first=${desc##*:}
  if [ "$(head -1 $logs/line)" = "<getname_flags@fs/namei.c:$first>" ]; then
    ok "test_line_semantics: a function in a file lists it :: $desc"
  else
    not_ok "test_line_semantics: a function in a file lists it :: $desc" "$(head -3 $logs/line)"
  fi
done

# --- base_probe/test_adding_kernel.sh -------------------------------------
# perf stat and perf record + perf script are kprobectl trace here, perf
# list is kprobectl list.

probe=inode_permission
for opt in "" -a --add; do
  clear_all_probes
  # shellcheck disable=SC2086
  kp $opt $probe 2>$logs/add.err
  rc=$?
  if [ $rc -eq 0 ] && all_found $logs/add.err 'Added new events?:' "probe:$probe" "on $probe"; then
    ok "test_adding_kernel: adding probe $probe :: ${opt:-(no option)}"
  else
    not_ok "test_adding_kernel: adding probe $probe :: ${opt:-(no option)}" "exit $rc" "$(show $logs/add.err)"
  fi
done
kp list 'probe:*' >$logs/list 2>&1
check "test_adding_kernel: listing added probe :: kprobectl list" \
  all_matched $logs/list "  probe:$probe(_[0-9]+)?	\(on $probe.*\).*"
kp -l >$logs/list-l 2>&1
check "test_adding_kernel: listing added probe :: -l" \
  all_found $logs/list-l "^ *probe:$probe(_[0-9]+)?[[:space:]]+\(on $probe([:+][0-9a-fA-F]+)?@.+\)"
kp trace -q -o $logs/stat "probe:$probe*" -- cat /proc/uptime >/dev/null 2>&1
hits=$(grep -c "probe:$probe: " $logs/stat)
check "test_adding_kernel: using added probe (trace counts $hits hits of cat /proc/uptime)" [ "$hits" -gt 0 ]
# perf's check_all_lines_matched takes "Removed event: probe:$probe" for a
# line's part: a kernel with inlined copies of $probe (5.10's: 16) has
# probe:${probe}_1 and on too.
kp -d "$probe*" 2>$logs/del.err
rc=$?
if [ $rc -eq 0 ] && all_matched $logs/del.err "Removed event: probe:$probe(_[0-9]+)?"; then
  ok "test_adding_kernel: deleting added probe"
else
  not_ok "test_adding_kernel: deleting added probe" "exit $rc" "$(show $logs/del.err)"
fi
kp list 'probe:*' >$logs/list 2>&1
check "test_adding_kernel: listing removed probe (should NOT be listed)" [ ! -s $logs/list ]
kp -n --add $probe 2>$logs/dry.err
rc=$?
if [ $rc -eq 0 ] && all_found $logs/dry.err 'Added new events?:' "probe:$probe" "on $probe" &&
  ! kp -l | grep -q "probe:$probe"; then
  ok "test_adding_kernel: dry run :: adding probe"
else
  not_ok "test_adding_kernel: dry run :: adding probe" "exit $rc" "$(show $logs/dry.err)" "$(kp -l)"
fi
kp --add $probe 2>$logs/force1.err
check "test_adding_kernel: force-adding probes :: first probe adding" \
  all_found $logs/force1.err 'Added new events?:' "probe:$probe" "on $probe"
kp --add $probe 2>$logs/force2.err
# perf: 'Error: event "inode_permission" already exists.'
fails_saying "test_adding_kernel: force-adding probes :: second probe adding (without force)" $? $logs/force2.err \
  "kprobectl: error: event 'probe:$probe' already exists"
probes=$(kp -l | wc -l)
kp --force --add $probe 2>$logs/force3.err
check "test_adding_kernel: force-adding probes :: second probe adding (with force)" \
  all_found $logs/force3.err 'Added new events?:' "probe:${probe}_${probes}" "on $probe"
kp trace -q -o $logs/two "probe:$probe" "probe:${probe}_${probes}" -- bash -c 'cat /proc/cpuinfo >/dev/null' \
  >/dev/null 2>&1
one=$(grep -c "probe:$probe: " $logs/two)
two=$(grep -c "probe:${probe}_${probes}: " $logs/two)
check "test_adding_kernel: using doubled probe (the same hits: $one and $two)" eval "[ $one -gt 0 ] && [ $one -eq $two ]"
probes=$(kp -l | wc -l)
kp --del '*' 2>$logs/delall.err
check "test_adding_kernel: removing multiple probes (all $probes)" eval "all_found $logs/delall.err \
  'Removed event: probe:$probe\$' 'Removed event: probe:${probe}_1\$' && all_matched $logs/delall.err \
  'Removed event: probe:$probe(_[0-9]+)?' && [ \$(wc -l <$logs/delall.err) -eq $probes ]"
kp -nf --max-probes=512 -a 'vfs_* $params' 2>$logs/wild.err
rc=$?
check "test_adding_kernel: wildcard adding support" eval "[ $rc -eq 0 ] && all_found $logs/wild.err \
  probe:vfs_mknod probe:vfs_create probe:vfs_rmdir probe:vfs_link probe:vfs_write"
# perf's limit without --max-probes (128): an error that says so. A kernel
# where 'vfs_*' makes 128 probes or fewer (5.10's 123) is given a limit
# one below what it makes.
made=$(grep -Ec '^ +probe:vfs_' $logs/wild.err)
limit=128
[ "$made" -gt $limit ] || limit=$((made - 1))
limit_opt=()
[ $limit -eq 128 ] || limit_opt=(--max-probes=$limit)
kp -nf "${limit_opt[@]}" -a 'vfs_* $params' 2>$logs/wild-limit.err
fails_saying "test_adding_kernel: wildcard adding support :: more than --max-probes ($limit) is refused" $? \
  $logs/wild-limit.err "'vfs_\* \\\$params' makes $made probes, more than the limit of $limit" 'max-probes'
var=somenonexistingrandomstuffwhichisalsoprettylongorevenlongertoexceed64
kp "vfs_read $var" 2>$logs/novar.err
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 139 ] && all_found $logs/novar.err "^kprobectl: error: .*no variable '$var'" '^  hint: ' &&
  nothing_left; then
  ok "test_adding_kernel: non-existing variable"
else
  not_ok "test_adding_kernel: non-existing variable" "exit $rc" "$(show $logs/novar.err)"
fi
# perf says "with \$retval"; kprobectl names the field: "with retval".
kp --add "$probe%return \$retval" 2>$logs/ret.err
check "test_adding_kernel: function with retval :: add" \
  all_found $logs/ret.err 'Added new events?:' "probe:${probe}__return" "on $probe%return.* with retval"
kp trace -o $logs/ret.trace "probe:$probe*" -- cat /proc/cpuinfo >/dev/null 2>$logs/ret.record
check "test_adding_kernel: function with retval :: record" \
  all_found $logs/ret.record '^kprobectl: [0-9]+ events printed, 0 lost to ring-buffer overruns'
# perf script: "cat PID [CPU] TIME: probe:inode_permission__return: (ADDR <- ADDR) arg1=0x0";
# a caller in a module is named with it: (ovl_permission+0xb8 [overlay] <- inode_permission).
re="cat-[0-9]+ +\[[0-9]+\] [0-9.]+: probe:${probe}__return: \([a-z_0-9.]+\+0x[0-9a-f]+( \[[a-z_0-9]+\])? <- $probe\) retval=-?[0-9]+"
if [ -s $logs/ret.trace ] && all_matched $logs/ret.trace " *$re"; then
  ok "test_adding_kernel: function argument probing :: script"
else
  not_ok "test_adding_kernel: function argument probing :: script" "$(show $logs/ret.trace 4)"
fi
clear_all_probes

# --- base_probe/test_adding_blacklisted.sh --------------------------------

blacklisted=$(head -n 5 /sys/kernel/debug/kprobes/blacklist 2>/dev/null | cut -f2)
if [ -z "$blacklisted" ]; then
  skip "test_adding_blacklisted: adding blacklisted function" "no kprobes/blacklist in debugfs"
else
  for func in $blacklisted; do
    kp "$func" >$logs/black.log 2>$logs/black.err
    rc=$?
    # perf: "FUNC is blacklisted function, skip it." then "Error: Failed to add events."
    if [ $rc -ne 0 ] && all_found $logs/black.err "on the kernel's kprobe blacklist" && nothing_left; then
      ok "test_adding_blacklisted: adding blacklisted function $func"
    else
      not_ok "test_adding_blacklisted: adding blacklisted function $func" "exit $rc" "$(show $logs/black.err)"
    fi
  done
  kp list 'probe:*' >$logs/black.list 2>&1
  check "test_adding_blacklisted: listing blacklisted probe (should NOT be listed)" [ ! -s $logs/black.list ]
fi

# --- lib/probe_vfs_getname.sh and its tests -------------------------------
# add_probe_vfs_getname finds the line where getname_flags has filled in
# result in -L's listing, then probes it with pathname=result->name:string;
# record+script_probe_vfs_getname touches a file and finds its name.
# (trace+probe_vfs_getname is perf trace's syscall beautifier: no port.)
# The line is looked for as perf's test of Linux 7.x looks for it, in its
# order: 'initname(result)' in getname_flags, 'result->uptr = filename'
# (5.10's, 6.1's and 6.12's), 'result->aname = NULL', and 'initname(result)'
# in do_getname (7.3's: "since v7.0 getname_flags() is a wrapper around
# do_getname()", perf's test says). With the kernel's own perf (PERF), its
# -L must number that line as kprobectl's does.

# getname_line LISTER...: "FUNC LINE" of the first place perf's test takes,
# from the listings LISTER -L FUNC prints.
getname_line() {
  local place func re line
  for place in 'getname_flags initname.*' 'getname_flags result->uptr.*' 'getname_flags result->aname = NULL;' \
    'do_getname initname.*'; do
    func=${place%% *}
    re="[[:space:]]+([[:digit:]]+)[[:space:]]+${place#* }"
    line=$("$@" -L "$func" 2>&1 | grep -E "$re" | sed -r "s/$re/\\1/" | head -1)
    [ -z "$line" ] || { echo "$func $line"; return 0; }
  done
  return 1
}
if [ -z "$source_tree" ]; then
  for what in "-L shows the line where getname_flags fills in result" "the vfs_getname probe is added" \
    "touch's file name is recorded"; do
    skip "probe_vfs_getname: $what" "no kernel source (scripts/vm --kernel-source)"
  done
else
  place=$(getname_line kp -s "$source_tree")
  func=${place% *}
  line=${place#* }
  check "probe_vfs_getname: -L shows the line where getname_flags fills in result ($func:$line)" \
    eval '[[ "$line" =~ ^[0-9]+$ ]]'
  if [ -z "$perf" ]; then
    skip "probe_vfs_getname: perf -L numbers that line as kprobectl does" "no perf of this kernel given"
  else
    perf_place=$(getname_line $perf probe -k "$vmlinux" -s "$source_tree")
    check "probe_vfs_getname: perf -L numbers that line as kprobectl does ($($perf --version): '$perf_place')" \
      [ "$perf_place" = "$place" ]
  fi
  kp "vfs_getname=$func:${line} pathname=result->name:string" 2>$logs/getname.err
  rc=$?
  if [ $rc -eq 0 ] && all_found $logs/getname.err 'probe:vfs_getname'; then
    ok "probe_vfs_getname: the vfs_getname probe is added (add_probe_vfs_getname)"
  else
    not_ok "probe_vfs_getname: the vfs_getname probe is added (add_probe_vfs_getname)" "exit $rc" \
      "$(show $logs/getname.err)"
  fi
  file=$(mktemp /tmp/temporary_file.XXXXX)
  kp trace -q -o $logs/getname.trace 'probe:vfs_getname*' -- touch "$file" >/dev/null 2>&1
  # perf script: " touch PID [CPU] TIME: probe:vfs_getname: (ADDR) pathname="FILE"".
  if grep -Eq "^ *touch-[0-9]+ +\[[0-9]+\] [0-9]+\.[0-9]+: probe:vfs_getname[_0-9]*: \([a-z_0-9.]+\+0x[0-9a-f]+\) pathname=\"$file\"$" \
    $logs/getname.trace; then
    ok "record+script_probe_vfs_getname: touch's file name is recorded by vfs_getname"
  else
    not_ok "record+script_probe_vfs_getname: touch's file name is recorded by vfs_getname" \
      "$(grep touch $logs/getname.trace | head -3)"
  fi
  rm -f "$file"
  kp -q -d 'probe:vfs_getname*'
fi
check "probe_vfs_getname: nothing left" nothing_left

# --- record+probe_libc_inet_pton.sh ---------------------------------------
# A uprobe on libc's inet_pton (from the ELF symbol table: no debuginfo
# needed), fired by ping -6 to ::1; perf's test then checks a backtrace 3
# levels deep: inet_pton in libc, then ping's code (perf record -e
# EVENT/max-stack=3/ + perf script). kprobectl's is trace --stack, whose
# frames are " => FUNC+0xOFF (FILE)" or " => 0xOFF (FILE)" without a symbol
# there; on x86-64 perf's third frame is ping's, kprobectl's CFI walk shows
# getaddrinfo between them.

libc=$(grep -w libc /proc/self/maps | head -1 | sed -r 's/.*[[:space:]](\/.*)/\1/g')
ip link set lo up 2>/dev/null
if ! nm -Dg "$libc" 2>/dev/null | grep -Fq inet_pton || ! command -v ping >/dev/null ||
  ! ip a sh lo | grep -Fq inet6; then
  for what in "the probe is added" "the probe fires in ping" "a backtrace: inet_pton in libc, then ping"; do
    skip "record+probe_libc_inet_pton: $what" "no inet_pton, ping or IPv6 on lo"
  done
else
  added=$(kp -f -x "$libc" -a inet_pton 2>&1)
  # With libc's debuginfo (libc6-dbg) kprobectl also says where: inet_pton@FILE.
  event=$(grep -P -o "probe_libc:inet_pton(_[[:digit:]]+)?(?=[[:space:]]\(on inet_pton(@[^ ]+)? in $libc\))" <<<"$added")
  check "record+probe_libc_inet_pton: the probe is added as probe_libc:inet_pton ($event)" [ -n "$event" ]
  kp trace -o $logs/pton "$event" -- ping -6 -c 1 ::1 >/dev/null 2>&1
  check "record+probe_libc_inet_pton: the probe fires in ping" \
    grep -Eq "^ *ping-[0-9]+ +\[[0-9]+\] [0-9.]+: $event: \(inet_pton\+0x[0-9a-f]+\)" $logs/pton
  kp -q -d "$event"
  # The stack of a probe trace adds itself is unwound through each file's
  # CFI; one made by add gets the kernel's frame-pointer walk, which ends in
  # libc (built without frame pointers).
  kp -x "$libc" trace -o $logs/pton-stack --stack --probe inet_pton -- ping -6 -c 1 ::1 >/dev/null 2>&1
  frames=$(grep -A3 ': probe_libc:inet_pton[_0-9]*: ' $logs/pton-stack | head -4 | tail -3)
  if grep -Eq "^ => inet_pton\+0x[0-9a-f]+ \($libc\)$" <<<"$(head -1 <<<"$frames")" &&
    grep -Eq '^ => .* \(/(usr/)?bin/ping\)$' <<<"$frames"; then
    ok "record+probe_libc_inet_pton: a backtrace: inet_pton in libc, then ping"
  else
    not_ok "record+probe_libc_inet_pton: a backtrace: inet_pton in libc, then ping" "$(head -5 $logs/pton-stack)"
  fi
fi

# --- test_uprobe_from_different_cu.sh -------------------------------------
# foo is compiled with -flto in one file and called from another: its DWARF
# is in a CU of its own (the LTO partition's), not the caller's.

cu=$(mktemp -d /tmp/kpvm-cu.XXXXXX)
cat >$cu/testfile-foo.h <<'EOF'
struct t
{
  int *p;
  int c;
};

extern int foo (int i, struct t *t);
EOF
cat >$cu/testfile-foo.c <<'EOF'
#include "testfile-foo.h"

int
foo (int i, struct t *t)
{
  int j, res = 0;
  for (j = 0; j < i && j < t->c; j++)
    res += t->p[j];

  return res;
}
EOF
cat >$cu/testfile-main.c <<'EOF'
#include "testfile-foo.h"

static struct t g;

int
main (int argc, char **argv)
{
  int i;
  int j[argc];
  g.c = argc;
  g.p = j;
  for (i = 0; i < argc; i++)
    j[i] = (int) argv[i][0];
  return foo (3, &g);
}
EOF
if gcc -g -Og -flto -c $cu/testfile-foo.c -o $cu/testfile-foo.o && gcc -g -Og -c $cu/testfile-main.c -o $cu/testfile-main.o &&
  gcc -g -Og -o $cu/testfile $cu/testfile-foo.o $cu/testfile-main.o; then
  check "test_uprobe_from_different_cu: funcs lists foo" [ "$(kp -x $cu/testfile --funcs --filter foo 2>&1)" = foo ]
  kp -x $cu/testfile foo 2>$logs/cu.err
  check "test_uprobe_from_different_cu: foo is added" all_found $logs/cu.err 'probe_testfile:foo'
  kp trace -q -o $logs/cu.trace 'probe_testfile:foo' -- $cu/testfile a b >/dev/null 2>&1
  check "test_uprobe_from_different_cu: foo's probe fires" grep -q 'probe_testfile:foo: (foo+0x0)' $logs/cu.trace
  kp -q -x $cu/testfile -d foo
else
  not_ok "test_uprobe_from_different_cu: the test program builds (gcc -flto)"
fi
rm -rf "$cu"
check "nothing left in kprobe_events, uprobe_events or instances/" eval 'nothing_left && [ ! -s $tracefs/uprobe_events ]'

rm -rf "$logs"
finish
