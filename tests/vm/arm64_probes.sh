# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The arm64 VM's own checks, sourced by kernel_probes.sh after its
# architecture-neutral ones (its kp, check, refuse, nothing_left, $build,
# $vmlinux, $host_answers). BUILD_DIR is the arm64 cross-build: kprobectl
# and the fixtures, the same sources as x86-64's, run here for real.
#  A. A function's entry as arm64's kernel has it: what the kernel takes
#     and refuses at FUNC+0, +4 and +8, and where kprobectl writes probes.
#  B. arm64's kprobe blacklist: its entry, noinstr and hyp sections.
#  C. The x86-64 host's offline answers for this kernel's image, byte for
#     byte against the arm64 build's here.
#  D. User space: a PIE program, a shared library, C++ and USDT markers,
#     each checked against what the program printed.
#  E. Go: its register ABI with and without DWARF, counted strings, its
#     results at each return instruction.

check "kprobectl first on PATH is the arm64 build ($(command -v kprobectl))" \
  eval '[ "$(command -v kprobectl)" = "$build/kprobectl" ] && [ "$(uname -m)" = aarch64 ]'

# A. ftrace's patchable entry: two NOPs at the symbol (6.12's CALL_OPS adds
#    two before it), the second of which ftrace makes its call. arm64 has
#    no KPROBES_ON_FTRACE, so the kernel refuses a kprobe there. A kretprobe
#    must be at the symbol. The host read the instructions from the image
#    (objdump) into $host_answers/entry, and where the DWARF begins (gdb):
#    after the NOPs on 5.10 to 6.12 (+8), at the symbol on 7.3.
ln -sf "$vmlinux" "/usr/lib/debug/boot/vmlinux-$release"
sed 's/^/# /' "$host_answers/entry"
at() { awk -v off="$1" '$1 == off { print $2 }' "$host_answers/entry"; }
check "vfs_read+0 and +4 are ftrace's patchable NOPs" [ "$(at 0)$(at 4)" = nopnop ]
defs=$(kp -D 'vfs_read' 2>&1; kp -D 'vfs_read%return' 2>&1; kp --btf -D 'vfs_read' 2>&1)
echo "$defs" | sed 's/^/# /'
check "kprobectl's DWARF entry is where the DWARF begins, vfs_read+$dwarf_entry ($(at "$dwarf_entry"))" \
  [ "$(sed -n 1p <<<"$defs")" = "p:probe/vfs_read vfs_read+$dwarf_entry" ]
check "its return probe is at the symbol, vfs_read+0" [ "$(sed -n 2p <<<"$defs")" = "r:probe/vfs_read__return vfs_read+0" ]
check "its BTF entry (no DWARF) is the symbol, vfs_read+0" [ "$(sed -n 3p <<<"$defs")" = "p:probe/vfs_read vfs_read+0" ]
raw() {  # raw DEFINITION: "accepted", or the kernel's error_log message
  echo >$tracefs/error_log
  if echo "$1" >>$tracefs/kprobe_events 2>/dev/null; then echo accepted; else
    sed -n 's/.*trace_kprobe: error: //p' $tracefs/error_log; fi
}
declare -A said
for probe in p:e0:0 p:e4:4 p:e8:8 r:r0:0 r:r8:8; do
  IFS=: read -r kind name offset <<<"$probe"
  said[$name]=$(raw "$kind:kparm/$name vfs_read+$offset")
  echo "# $kind:kparm/$name vfs_read+$offset: ${said[$name]}"
done
check "the kernel takes a kprobe at vfs_read+0 (a NOP)" [ "${said[e0]}" = accepted ]
check "and refuses one on ftrace's call site, vfs_read+4 (no KPROBES_ON_FTRACE on arm64)" \
  [ "${said[e4]}" = "Failed to register probe event" ]
check "it takes one on the landing pad, vfs_read+8" [ "${said[e8]}" = accepted ]
check "it takes a kretprobe at the symbol" [ "${said[r0]}" = accepted ]
check "and refuses one at vfs_read+8" [ "${said[r8]}" = "Retprobe address must be an function entry" ]
echo 1 >$tracefs/events/kparm/enable
cat /tmp/kpvm-file >/dev/null
echo 0 >$tracefs/events/kparm/enable
hits() { awk -v e="$1" '$1 == e { print $2 }' $tracefs/kprobe_profile; }
echo "# hits: e0 $(hits e0), e8 $(hits e8), r0 $(hits r0)"
check "the probes it took fired" [ "$(hits e0)" -gt 0 -a "$(hits e8)" -gt 0 -a "$(hits r0)" -gt 0 ]
echo >$tracefs/kprobe_events
err=$(kp --btf add 'kparm:f=vfs_read+4' 2>&1)
echo "$err" | sed 's/^/# /'
check "kprobectl shows the kernel's refusal of the ftrace call site, and leaves nothing" \
  eval 'grep -q "rejected the probe definition: Failed to register probe event" <<<"$err" && nothing_left'

# B. arm64's blacklist: .entry.text (cpu_switch_to, assembly), .noinstr.text
#    (el0_svc), the hypervisor's .hyp.text (its functions carry the
#    __kvm_nvhe_ prefix: handle___kvm_vcpu_run on 6.1), and NOKPROBE_SYMBOL
#    (do_mem_abort, above). The
#    kernel lists each in its blacklist, and refuses them itself too.
# The hypervisor's: handle___kvm_vcpu_run, or the first __kvm_nvhe_
# handler kallsyms names (5.10's names none: its hyp text is unnamed there).
hyp=$(awk '$3 ~ /^__kvm_nvhe_handle_/ { h = h ? h : $3 } $3 == "__kvm_nvhe_handle___kvm_vcpu_run" { v = $3 }
           END { print v ? v : h }' /proc/kallsyms)
[ -n "$hyp" ] || skip "a .hyp.text function is refused" "this kernel's kallsyms names no __kvm_nvhe_ function"
for f in cpu_switch_to el0_svc $hyp; do
  listed=$(awk -v f="$f" '$2 == f' /sys/kernel/debug/kprobes/blacklist | head -1)
  refuse "$f is refused: on the kernel's kprobe blacklist ($listed)" "'$f' is on the kernel's kprobe blacklist" \
    "kparm:b=$f"
done
echo "# the kernel's own answer for el0_svc: $(raw 'p:kparm/b el0_svc')"
echo >$tracefs/kprobe_events

# C. The host's offline answers, byte for byte.
# shellcheck source=offline_answers.sh
. "$(dirname "${BASH_SOURCE[0]}")/offline_answers.sh"
rm -rf /tmp/kparm-answers
offline_answers "$build/kprobectl" "$vmlinux" "$(cat "$host_answers/module")" /tmp/kparm-answers "$open_full"
different=$(diff -r "$host_answers/offline" /tmp/kparm-answers)
echo "# $(ls /tmp/kparm-answers | wc -l) commands, as the host ran them:"
head -1 -q /tmp/kparm-answers/* | sed 's/^/#   /'
check "the arm64 build's offline answers are the x86-64 host's, byte for byte" [ -z "$different" ]
[ -z "$different" ] || echo "$different" | head -40 | sed 's/^/#   /'
# Without -k, for the running kernel: the same KASLR-safe targets.
running=$(kp -D 'vfs_read $params' -D "$open_full" -D c_start 2>&1)
host=$(sed -e '/^> /d' -e '/^exit /d' "$host_answers/offline/01" "$host_answers/offline/03" "$host_answers/offline/04")
check "for the running kernel, the same definitions as the host's for its image" [ "$running" = "$host" ]
[ "$running" = "$host" ] || diff <(echo "$host") <(echo "$running") | sed 's/^/#   /'

# D. User space, on the arm64 fixtures.
fx=$build/tests/fixtures
traced() {  # traced EVENT: the fields of its lines, "(where) a=1 b=2"
  grep " kparm:$1: " /tmp/kparm-u | sed 's/.* kparm:[^ ]*: //'
}
# A PIE program: arguments in x0.., the 7th and 8th in x6 and x7, a string,
# the return value, a static function two files define (helper).
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/target_O2" --probe 'kparm:c=compute a b' \
  --probe 'kparm:c=compute%return $retval' --probe 'kparm:m=many_args a1 a7 a8' \
  --probe 'kparm:g=greet name:string times' --probe 'kparm:h=helper x' -- "$fx/target_O2" 6 7 2>&1)
echo "$out" | sed 's/^/# /'
sed 's/^/# /' /tmp/kparm-u
check "a PIE's function fired with compute(6, 7)" eval '[ "$(traced c)" = "(compute+0x0) a=6 b=7" ]'
check "its return probe has the result the program printed (1042)" \
  eval 'grep -q "^compute 6 7 -> 1042$" <<<"$out" && traced c__return | grep -q " retval=1042$"'
check "the 7th and 8th arguments (x6, x7) are many_args' 76 and 87" \
  eval '[ "$(traced m)" = "(many_args+0x0) a1=6 a7=76 a8=87" ]'
check "a string argument: greet's name" eval '[ "$(traced g)" = "(greet+0x0) name=\"world\" times=7" ]'
check "both static helpers fired, with 6 and 7" \
  eval '[ "$(traced h)" = "(helper+0x0) x=6" ] && [ "$(traced h_1)" = "(helper+0x0) x=7" ]'
# A shared library's function, in the program that loads it.
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/libsdtfx.so" --probe 'kparm:p=sdtlib_ping n what:string' \
  --probe 'kparm:p=sdtlib_ping%return $retval' -- "$fx/sdt" 5 9 hello 2>&1)
sed 's/^/# /' /tmp/kparm-u
check "a library's function fired with its arguments (6, \"hello\")" \
  eval '[ "$(traced p)" = "(sdtlib_ping+0x0) n=6 what=\"hello\"" ]'
check "and returned what the program printed (106)" \
  eval 'grep -q "^ping 6 \"hello\" -> 106$" <<<"$out" && traced p__return | grep -q " retval=106$"'
# C++: a method by its C++ name, this->members, a reference's member and a
# std::string; a virtual override; a const method's return.
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/shop" \
  --probe 'kparm:add=shop::Cart::add(const Item&, int) name=item.name:string price=item.price count before=this->total_' \
  --probe 'kparm:kind=shop::GiftCart::kind this->note_:string' --probe 'kparm:t=shop::Cart::total%return $retval' -- \
  "$fx/shop" 7 120 apple 2>&1)
sed 's/^/# /' /tmp/kparm-u
check "a C++ method's reference argument, std::string and this->total_ (add \"apple\" 120 3, then 1)" \
  eval '[ "$(traced add | sed "s/^.*+0x0) //")" = "name=\"apple\" price=120 count=3 before=0
name=\"apple\" price=120 count=1 before=485" ]'
check "a virtual override's this->note_" eval 'traced kind | grep -q "note_=\"gift\"$"'
check "a const method's return value is the total the program printed (605)" \
  eval 'grep -q "^total 605$" <<<"$out" && [ "$(traced t__return | sed "s/.* retval=//")" = 605 ]'
# USDT: every operand form of the arm64 assembler (registers, a stack slot
# [sp, N], a constant, a global), a marker with a semaphore the kernel
# raises, and a library's marker with its own semaphore.
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/sdt" --probe 'kparm:plain=sdtfx:plain' \
  --probe 'kparm:counted=%sdtfx:counted name=arg2:string n=arg1' -- "$fx/sdt" 5 9 hello 2>&1)
sed 's/^/# /' /tmp/kparm-u
echo "$out" | grep -e plain -e counted | sed 's/^/# /'
check "a USDT marker's arguments are the program's (5 9 45 4242 1234 46)" \
  eval 'traced plain | grep -q "arg1=5 arg2=9 arg3=[0-9]* arg4=45 arg5=4242 arg6=1234 arg7=46$"'
check "the kernel raised the marker's semaphore (the program saw 1) and it fired" \
  eval 'grep -q "^counted 5 \"hello\" semaphore 1$" <<<"$out" && [ "$(traced counted)" = "(sdt_sdtfx:counted) name=\"hello\" n=5" ]'
kp trace -q -o /tmp/kparm-u -x "$fx/libsdtfx.so" --probe 'kparm:ping=sdtlib:ping n=arg1 what=arg2:string' -- \
  "$fx/sdt" 5 9 hello >/dev/null 2>&1
check "a library's marker behind its semaphore fired in the program" \
  eval '[ "$(traced ping)" = "(sdt_sdtlib:ping) n=6 what=\"hello\"" ]'
check "without a probe the semaphore stays down" eval '"$fx/sdt" 5 9 hello | grep -q "semaphore 0$"'
# E. Go, cross-built by Debian's go (GOARCH=arm64): $argN by Go's arm64
#    register ABI (R0-R15) without DWARF (-ldflags=-w), DWARF's names and
#    counted strings, FUNC%return at each RET (Capstone arm64) with the
#    results where Go's ABI puts them; each equal to what the program
#    printed, and the program exits 0 (no uretprobe on a goroutine's stack).
said() { grep "^$1 " <<<"$out" | sed "s/^$1 //"; }  # said PREFIX: what the program printed after it
every() { grep -E " kparm:$1(_[0-9]+)?: " /tmp/kparm-u | sed 's/.* kparm:[^ ]*: (.*+0x[0-9a-f]*) //'; }
nil() { sed -E 's/ [a-z]+__len=[0-9]+//; s/tab=0x0$/nilerr=true/; s/tab=0x[0-9a-f]+$/nilerr=false/'; }
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/gofx_nodwarf" --probe 'kparm:raw=main.(*Server).Serve alen=$arg3 n=$arg4' \
  --probe 'kparm:rr=main.(*Server).Serve%return $retval:s64' -- "$fx/gofx_nodwarf" 2>&1)
status=$?
sed 's/^/# /' /tmp/kparm-u
check "Go without DWARF: the program exits 0" [ "$status" -eq 0 ]
check "\$arg3 and \$arg4 are R2 and R3: path's length and n (6 0 300, 3)" \
  eval '[ "$(every raw | tr "\n" " ")" = "alen=0x6 n=0x3 alen=0x0 n=0x3 alen=0x12c n=0x3 " ]'
check "\$retval at each RET is R0, what Serve returned (9 3 303)" \
  eval '[ "$(every rr | tr "\n" " ")" = "$(said "Serve returned" | sed "s/^/retval=/" | tr "\n" " ")" ]'
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/gofx" --probe 'kparm:serve=main.(*Server).Serve n path' \
  --probe 'kparm:handle=main.handle count price=it.Price name=it.Name' -- "$fx/gofx" 2>&1)
status=$?
sed 's/^/# /' /tmp/kparm-u
check "Go with DWARF: the program exits 0" [ "$status" -eq 0 ]
serve=$(every serve | sed 's/abcdefghij\(abcdefghij\)*abcd"\.\.\./LONG/')
check "DWARF's names and a counted string: Serve's n and path (\"/index\", \"\", 300 bytes cut at 64)" \
  [ "$serve" = "$(printf 'n=3 path="/index" path__len=6\nn=3 path="" path__len=0\nn=3 path="LONG path__len=300')" ]
check "a struct argument's members: handle's it.Price and it.Name (7 \"apple\"), count 2" \
  eval '[ "$(every handle)" = "count=2 price=7 name=\"apple\" name__len=5" ]'
out=$(kp trace -q -o /tmp/kparm-u -x "$fx/gorets" --probe 'kparm:lookup=main.lookup%return n=$retval tab=~r1.tab' \
  --probe 'kparm:pair=main.pair%return s=$retval i=~r1' --probe 'kparm:named=main.named%return n s tab=err.tab' \
  --probe 'kparm:point=main.point%return x=~r0.X y=~r0.Y name=~r0.Name' --probe 'kparm:small=main.small%return ok b u' \
  --probe 'kparm:wide=main.wide%return i j' --probe 'kparm:shifted=main.shifted%return r0=r[0] r1=r[1] m' \
  -- "$fx/gorets" 2>&1)
status=$?
sed 's/^/# /' /tmp/kparm-u
echo "$out" | sed 's/^/# /'
check "Go's results at its RETs: the program exits 0" [ "$status" -eq 0 ]
for f in lookup pair named point small wide shifted; do
  recorded=$(every $f | nil | sed 's/^ok=1 /ok=true /; s/^ok=0 /ok=false /')
  check "$f's results at its return instructions are what the program printed ($(said $f | tr '\n' ';'))" \
    [ "$recorded" = "$(said $f)" ]
done
check "named's three return instructions each fired" \
  eval '[ "$(grep -oE " kparm:named(_[0-9])?: " /tmp/kparm-u | sort -u | wc -l)" = 3 ]'

# x86-64's register names get arm64's.
err=$(kp -x "$fx/target_O2" -D 'compute a=%di' 2>&1)
check "%di in an arm64 program's probe: did you mean %x0?" \
  grep -q "did you mean %x0? (%di is x86-64's register for argument 1; on arm64 it is %x0)" <<<"$err"
check "nothing left after the arm64 checks" eval 'nothing_left && [ ! -s $tracefs/uprobe_events ]'
