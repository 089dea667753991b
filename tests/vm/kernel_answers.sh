# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the VM suites probe that one kernel build has and another has not
# in the same place: a line of do_sys_openat2 where the struct filename
# it got from getname() is there (line 11 of Debian's 5.10, one FD_ADD
# line in 7.3, whose local is 'name' of class_filename_flags_t, and
# where arm64's build no longer has how), and a
# line of dummy_init_one where the registered device and err are there.
# Chosen from the image's DWARF (kprobectl line and vars with -k, on the
# host: seconds in a TCG guest) by what each line holds, never by number,
# so that Debian's next build moves them with its code. The checks that
# use them compare what the probes recorded with what the programs did:
# a line or a variable kprobectl got wrong still fails them. Sourced by
# tests/vm/run.
#
# kernel_answers KPROBECTL VMLINUX MODULE_KO FILE: writes shell assignments
# to FILE, sourced by the suites in the guest:
#   open_line, open_var, open_how, open_probes: the line, the local, 1
#     when how (the open_how) is there too, how many places the line has
#     (one probe each); open_spec, open_full, open_names: the probe with
#     the local's name, with how's flags (where there) and dfd too, and the
#     names kprobectl list shows for the latter;
#   init_line, init_err: the line of dummy_init_one, and 1 when err (the
#     register_netdevice() result) is there too, so that the device has
#     its name (dummy0), else 0 (the last line with the device, before it
#     is registered: its name is still the template, dummy%d);
#   optval_computed: 1 when, where kprobectl probes do_tcp_setsockopt, gdb
#     (another DWARF reader) finds a piece of its sockptr_t optval computed
#     by the DWARF expression rather than kept somewhere (arm64's 5.10:
#     is_kernel is (x4 << 7) >> 7, DW_OP_shl), which no fetcharg computes:
#     kprobectl must refuse that member, and say why;
#   dwarf_entry: where vfs_read's DWARF begins, in bytes from its symbol
#     (gdb's line table, readelf's symbol): 8 on arm64's 5.10 to 6.12,
#     whose DWARF begins after ftrace's two NOPs, 0 on its 7.3 and on
#     x86-64; kprobectl's DWARF entry probes go there;
#   btf_openat2: 1 when the image's BTF (read here by a reader of its own,
#     btf_functions) has do_sys_openat2, else 0 (arm64's 5.10: pahole left
#     it out, its calling convention changed), where kprobectl must say so.
# Exit 1, saying why, when a kernel has no such line.

# vars_blocks: kprobectl vars' output as one line per address, its
# variables "TYPE|NAME" separated by spaces.
vars_blocks() {
  awk -F'\t' '/^\t@</ { if (n++) print line; line = ""; next }
              /^\t\t/ { gsub(/ /, "_", $3); line = line " " $3 "|" $4 } END { if (n) print line }'
}

kernel_answers() {
  local kp=$1 vmlinux=$2 module=$3 out=$4 line blocks var found=
  for line in $("$kp" -k "$vmlinux" line do_sys_openat2 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }'); do
    blocks=$("$kp" -k "$vmlinux" vars "do_sys_openat2:$line" 2>/dev/null | vars_blocks)
    [ -n "$blocks" ] || continue
    # Every place of the line has dfd and a struct filename *; and how,
    # whose flags are read too where every place has it (arm64's 7.3 keeps
    # it no further than the line before).
    var=$(awk '{ f = ""; d = h = 0
                 for (i = 1; i <= NF; i++) {
                   split($i, tn, "|")
                   if (tn[2] == "dfd") d = 1
                   if (tn[2] == "how") h = 1
                   if (tn[1] == "struct_filename*" || tn[1] ~ /^class_filename[a-z_]*_t$/) f = tn[2]
                 }
                 if (!d || f == "") { bad = 1; exit }
                 if (!h) no_how = 1
                 if (name == "") name = f; else if (name != f) bad = 1 }
               END { if (!bad && name != "") print name, (no_how ? 0 : 1) }' <<<"$blocks")
    if [ -n "$var" ]; then
      found="open_line=$line open_var=${var% *} open_how=${var#* } open_probes=$(wc -l <<<"$blocks")"
      break
    fi
  done
  [ -n "$found" ] || { echo "kernel_answers: no line of do_sys_openat2 has its struct filename and dfd" >&2; return 1; }
  echo "$found" >"$out"
  # shellcheck source=/dev/null
  . "$out"
  # The specs: the struct filename's name (the boot probe's), and with
  # how's flags where they are there and dfd; the names list shows.
  local flags=''
  [ "$open_how" = 1 ] && flags=' flags=how->flags'
  printf "open_spec='%s' open_full='%s' open_names='%s'\n" "do_sys_openat2:$open_line name=$open_var->name:string" \
    "do_sys_openat2:$open_line name=$open_var->name:string$flags dfd" "name${flags:+ flags} dfd" >>"$out"
  local with_err='' before=''
  for line in $("$kp" -k "$vmlinux" -m "$module" line dummy_init_one 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }'); do
    blocks=$("$kp" -k "$vmlinux" -m "$module" vars "dummy_init_one:$line" 2>/dev/null | vars_blocks)
    [ "$(wc -l <<<"$blocks")" = 1 ] || continue
    if [[ "$blocks " = *"|dev_dummy "* ]]; then
      [[ "$blocks " = *"|err "* ]] && { with_err=$line; break; }
      before=$line
    fi
  done
  if [ -n "$with_err" ]; then echo "init_line=$with_err init_err=1" >>"$out"
  elif [ -n "$before" ]; then echo "init_line=$before init_err=0" >>"$out"
  else
    echo "kernel_answers: no line of dummy_init_one has dev_dummy" >&2
    return 1
  fi
  gdb_answers "$kp" "$vmlinux" >>"$out"
  echo "btf_openat2=$(btf_functions "$vmlinux" | grep -cx do_sys_openat2)" >>"$out"
}

# gdb_answers KPROBECTL VMLINUX: "optval_computed=0|1" and
# "dwarf_entry=N" (above), from one gdb run.
gdb_answers() {
  local at gdb scope addr computed=0 from to ops line symbol
  at=$("$1" -k "$2" -D do_tcp_setsockopt 2>/dev/null | awk 'NR == 1 { print $2 }')
  gdb=$(command -v gdb-multiarch || command -v gdb)
  scope=$("$gdb" -batch -nx -ex 'info line vfs_read' -ex "printf \"ADDR %lx\\n\", (long)(${at%+*})+${at##*+}" \
    -ex "info scope *((long)(${at%+*})+${at##*+})" "$2" 2>/dev/null || true)  # (7.3's: exit 1, said all)
  addr=$((16#$(sed -n 's/^ADDR //p' <<<"$scope")))
  # optval's places, one line each: "FROM TO WHAT" (FROM 0: everywhere).
  while read -r from to ops; do
    if [ "$from" = 0 ] || { [ $((16#$from)) -le $addr ] && [ $addr -lt $((16#$to)) ]; }; then
      [[ "$ops " =~ DW_OP_(shl|shr|shra|and|or|xor|mul|div|mod|neg|not)\  ]] && computed=1
    fi
  done < <(awk '/^Symbol / { inside = ($2 == "optval") } !inside { next }
                /^Symbol optval is multi-location/ { next }
                /^Symbol optval is / { line = "0 0 " $0; next }
                /Range 0x/ { if (line != "") print line; r = $0; sub(/.*Range 0x/, "", r); split(r, b, /[-:]/)
                             sub(/^0x/, "", b[2]); line = b[1] " " b[2] " " $0; next }
                { line = line " " $0 } END { if (line != "") print line }' <<<"$scope")
  echo "optval_computed=$computed"
  # (No reader of a pipe here stops before its end: tests/vm/run has
  # pipefail, and the writer's SIGPIPE would end it.)
  line=$(awk '/^Line .* starts at address 0x/ && !n++ { sub(/.* starts at address 0x/, ""); print $1 }' <<<"$scope")
  symbol=$(readelf -sW "$2" | awk '$8 == "vfs_read" && $4 == "FUNC" && !n++ { print $2 }')
  echo "dwarf_entry=$((16#$line - 16#$symbol))"
}

# btf_functions VMLINUX: the names of the FUNCs in its .BTF section, one a
# line (a little-endian ELF64's section headers; include/uapi/linux/btf.h's
# layout, kinds 1-19).
btf_functions() {
  python3 - "$1" <<'PY'
import mmap, struct, sys
with open(sys.argv[1], "rb") as f:
    elf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
shoff, = struct.unpack_from("<Q", elf, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
def section(i):
    name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize)
    return name, offset, size
names = section(shstrndx)[1]
for i in range(shnum):
    name, offset, size = section(i)
    if elf[names + name:names + name + 5] == b".BTF\0":
        data = elf[offset:offset + size]
        break
else:
    sys.exit("no .BTF section")
magic, _, _, hdr_len, type_off, type_len, str_off, _ = struct.unpack_from("<HBBIIIII", data)
assert magic == 0xEB9F, "no BTF"
types, strings = hdr_len + type_off, hdr_len + str_off
extra = {1: 4, 3: 12, 14: 4, 17: 4}  # INT, ARRAY, VAR, DECL_TAG
per_member = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}  # STRUCT UNION ENUM FUNC_PROTO DATASEC ENUM64
at = types
while at < types + type_len:
    name_off, info, _ = struct.unpack_from("<III", data, at)
    kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
    if kind == 12:  # FUNC
        end = data.index(b"\0", strings + name_off)
        print(data[strings + name_off:end].decode())
    at += 12 + extra.get(kind, 0) + per_member.get(kind, 0) * vlen
PY
}
