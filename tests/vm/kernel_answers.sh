# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the VM suites probe that one kernel build has and another has not
# in the same place: a line of do_sys_openat2 where the struct filename
# it got from getname() is there (line 11 of Debian's 5.10, one FD_ADD
# line in 7.3, whose local is 'name' of class_filename_flags_t), and a
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
#   open_line, open_var, open_probes: the line, the local, how many places
#     the line has (one probe each);
#   init_line, init_err: the line of dummy_init_one, and 1 when err (the
#     register_netdevice() result) is there too, so that the device has
#     its name (dummy0), else 0 (the last line with the device, before it
#     is registered: its name is still the template, dummy%d).
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
    # Every place of the line has dfd, how and a struct filename *.
    var=$(awk '{ f = ""; d = h = 0
                 for (i = 1; i <= NF; i++) {
                   split($i, tn, "|")
                   if (tn[2] == "dfd") d = 1
                   if (tn[2] == "how") h = 1
                   if (tn[1] == "struct_filename*" || tn[1] ~ /^class_filename[a-z_]*_t$/) f = tn[2]
                 }
                 if (!d || !h || f == "") { bad = 1; exit }
                 if (name == "") name = f; else if (name != f) bad = 1 }
               END { if (!bad && name != "") print name }' <<<"$blocks")
    if [ -n "$var" ]; then
      found="open_line=$line open_var=$var open_probes=$(wc -l <<<"$blocks")"
      break
    fi
  done
  [ -n "$found" ] || { echo "kernel_answers: no line of do_sys_openat2 has its struct filename, dfd and how" >&2; return 1; }
  echo "$found" >"$out"
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
}
