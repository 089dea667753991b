#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kprobectl-serve.service under a real systemd, in the VM (tests/vm/run
# BUILD KERNEL serve_unit): the build installed as a package installs it
# (cmake --install: the binary, the unit, the example serve.conf), systemd
# (Debian 12's, the host's) started as the init of a PID namespace of its
# own (the guest's init is scripts/vm's busybox), and the unit driven with
# systemctl: not started without /etc/kprobectl/serve.conf; started with
# the example, its kernel probe's counter moving in /metrics; its hardening
# in force (capabilities, mounts); reloaded, counts kept; stopped, with nothing
# of kprobectl's left in kprobe_events, uprobe_events, dynamic_events,
# instances/ or its records; killed (SIGKILL), its probes left, and removed
# by the next start; with a user probe too, served over TLS. Then settings
# added by a drop-in: no capability at all (it serves), and those its
# comments say cannot be used (it does not).
# Usage: serve_unit.sh BUILD_DIR VMLINUX
set -u
build=$1
vmlinux=$2
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
echo "# kernel $release on $(uname -m), $(/lib/systemd/systemd --version | head -1)"

# Installed as a package installs it, into the guest's /usr/local (its
# writable layer over the host's).
cmake --install "$build" --prefix /usr/local >/tmp/install.log 2>&1
check "cmake --install" [ $? -eq 0 ]
unit=/usr/local/lib/systemd/system/kprobectl-serve.service
check "the unit names the installed binary" grep -qx 'ExecStart=/usr/local/bin/kprobectl serve -c /etc/kprobectl/serve.conf' $unit

# systemd as PID 1 of a namespace of its own (its own /proc), with a target
# of nothing as its default: what a start needs, the start pulls in.
mkdir -p /run/systemd/system
printf '[Unit]\nDescription=kprobectl VM test\n' >/run/systemd/system/kpvm.target
unshare --pid --fork --mount --propagation private --mount-proc \
  /lib/systemd/systemd --system --unit=kpvm.target --log-target=console --show-status=no >/tmp/systemd.log 2>&1 &
unshared=$!
sd_pid=
for _ in $(seq 100); do
  sd_pid=$(cat /proc/$unshared/task/$unshared/children 2>/dev/null | awk '{ print $1 }')
  [ -n "$sd_pid" ] && [ -S /run/systemd/private ] && break
  sleep 0.2
done
sd() { nsenter -t "$sd_pid" -m -p -r -w "$@"; }
# systemctl waits for the manager's bus; is-system-running --wait for its start-up.
state=$(sd timeout 120 systemctl is-system-running --wait 2>&1)
check "systemd runs (state: $state)" eval '[ -n "$sd_pid" ] && sd systemctl --version >/dev/null'

url=http://127.0.0.1:9464/metrics
tls=()  # curl's options for https
metrics() { curl -sf --max-time 10 "${tls[@]}" $url; }
hits() { metrics | sed -n 's/^kprobectl_probe_hits_total{event="kpserve:read"} \([0-9]*\)$/\1/p'; }
ours() {  # what the unit's probes made, in tracefs, and its records
  grep -h kpserve $tracefs/kprobe_events $tracefs/uprobe_events $tracefs/dynamic_events
  ls $tracefs/instances
  ls /run/kprobectl 2>/dev/null
}
nothing_ours() { [ -z "$(ours)" ]; }
status() { sd systemctl status --no-pager -n 20 kprobectl-serve 2>&1 | sed 's/^/#   /'; }
wait_served() {  # up to 60 s for the first answer
  for _ in $(seq 120); do metrics >/dev/null && return 0; sleep 0.5; done
  return 1
}

# No configuration: not started, not failed.
sd systemctl start kprobectl-serve
check "without /etc/kprobectl/serve.conf: the start is a no-op" \
  [ "$(sd systemctl show -P ConditionResult kprobectl-serve)" = no ]
check "... and nothing in tracefs" nothing_ours

mkdir -p /etc/kprobectl
cp /usr/local/share/doc/kprobectl/examples/serve.conf /etc/kprobectl/serve.conf
# The kernel's debuginfo index where the service keeps it, from the host's
# cache (tests/vm/run built it there): built here, under TCG, it takes minutes.
build_id=$(readelf -n "$vmlinux" | sed -n 's/.*Build ID: *//p')
mkdir -p /var/cache/kprobectl
cp "${XDG_CACHE_HOME:-$HOME/.cache}/kprobectl/$build_id".* /var/cache/kprobectl/
sd systemctl start kprobectl-serve
check "started with the example configuration" sd systemctl is-active -q kprobectl-serve
check "/metrics answers" wait_served || status
first=$(hits)
for _ in $(seq 20); do cat /etc/os-release >/dev/null; done
second=$(hits)
check "kpserve:read's hits move in /metrics ($first, then $second)" [ -n "$first" ] && [ "${second:-0}" -gt "$first" ]
check "the hits by comm are served" eval 'metrics | grep -q "^kprobectl_reads_hits_total{comm=\"cat\"} [1-9]"'
check "its probe is in kprobe_events" grep -q '^p:kpserve/read ' $tracefs/kprobe_events
pid=$(sd systemctl show -P MainPID kprobectl-serve)
# Its capabilities, from the inside (the namespace's /proc has its PID).
capbnd=$(sd sed -n 's/^CapBnd:\t//p' "/proc/$pid/status")
check "its bounding set is CAP_DAC_READ_SEARCH alone ($capbnd)" [ "$capbnd" = 0000000000000004 ]
# Its mounts (its root too: the namespace's own is the guest's initramfs).
in_unit() { sd nsenter -t "$pid" -m -r -w sh -c "$1"; }
check "its /usr is read-only" in_unit '! touch /usr/kpvm 2>/dev/null'
check "its /root is empty (here it is not)" eval '[ -n "$(ls -A /root)" ] && in_unit "[ -z \"\$(ls -A /root 2>/dev/null)\" ]"'
check "its /var/cache/kprobectl is writable" in_unit 'touch /var/cache/kprobectl/kpvm && rm /var/cache/kprobectl/kpvm'
check "its /sys/kernel/tracing is writable" in_unit "[ -w $tracefs/kprobe_events ]"

# A reload (SIGHUP) reads the configuration again; the process stays, and
# so do the counts.
before=$(hits)
sd systemctl reload kprobectl-serve
sleep 2
check "reloaded: still active, the same process" \
  eval '[ "$(sd systemctl show -P MainPID kprobectl-serve)" = "$pid" ] && sd systemctl is-active -q kprobectl-serve'
check "... and served" wait_served
after=$(hits)
check "... its counts kept ($before, then $after)" [ "${after:-0}" -ge "${before:-1}" ]

sd systemctl stop kprobectl-serve
check "stopped" [ "$(sd systemctl is-active kprobectl-serve)" = inactive ]
check "nothing of its own left in tracefs or /run/kprobectl" nothing_ours || ours | sed 's/^/#   /'

# Killed: its probes stay (and its record, which RuntimeDirectoryPreserve=
# keeps), and the next start removes them.
sd systemctl start kprobectl-serve
wait_served >/dev/null
sd systemctl kill -s KILL kprobectl-serve
sleep 2
check "SIGKILLed: its probe left, and its record" eval 'grep -q kpserve $tracefs/kprobe_events && [ -n "$(ls /run/kprobectl)" ]'
sd systemctl reset-failed kprobectl-serve 2>/dev/null
sd systemctl stop kprobectl-serve
sd systemctl start kprobectl-serve
check "started again" wait_served
check "... with one probe, its own" [ "$(grep -c kpserve $tracefs/kprobe_events)" = 1 ]
sd systemctl stop kprobectl-serve
check "stopped: nothing left" nothing_ours || ours | sed 's/^/#   /'

# A user probe (the types fixture's tick(i), in uprobe_events) and TLS
# (GnuTLS, under MemoryDenyWriteExecute=yes): a self-signed certificate in
# a web configuration beside serve.conf.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout /etc/kprobectl/server.key \
  -out /etc/kprobectl/server.crt -days 2 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 2>/dev/null
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n' >/etc/kprobectl/web.yml
cat >>/etc/kprobectl/serve.conf <<CONF
web-config web.yml
probe -x $build/tests/fixtures/types kpserve:tick=tick i
hist kpserve:tick -k comm,i.log2 --name ticks
CONF
url=https://127.0.0.1:9464/metrics
tls=(--cacert /etc/kprobectl/server.crt)
sd systemctl start kprobectl-serve
check "started with a user probe, over TLS" wait_served || status
"$build/tests/fixtures/types" 100 >/dev/null
check "its uprobe is in uprobe_events" grep -q '^p:kpserve/tick ' $tracefs/uprobe_events
check "tick's 100 hits served over https" eval 'metrics | grep -qx "kprobectl_probe_hits_total{event=\"kpserve:tick\"} 100"'
check "... and their sum by comm (0+1+...+99)" eval 'metrics | grep -qx "kprobectl_ticks_i_sum{comm=\"types\"} 4950"'
check "plain http is refused" eval '! curl -sf --max-time 10 http://127.0.0.1:9464/metrics >/dev/null'
sd systemctl stop kprobectl-serve
check "stopped: nothing left, in uprobe_events either" nothing_ours || ours | sed 's/^/#   /'

# Settings in a drop-in, each alone: with no capability at all it still
# serves (tracefs needs none); with those the unit says cannot be set, the
# start fails (kprobectl or systemd says why, in the journal) and nothing
# is left.
dropins=/run/systemd/system/kprobectl-serve.service.d
mkdir -p $dropins
with_setting() {  # with_setting serves|fails SETTING...
  local expect=$1 state t0
  shift
  printf '[Service]\nRestart=no\n' >$dropins/kpvm.conf
  printf '%s\n' "$@" >>$dropins/kpvm.conf
  sd systemctl daemon-reload
  t0=$(date +%s)
  sd systemctl start kprobectl-serve 2>/dev/null
  for _ in $(seq 60); do
    state=$(sd systemctl is-active kprobectl-serve)
    if [ "$state" != active ] || metrics >/dev/null; then break; fi
    sleep 0.5
  done
  if [ "$expect" = serves ]; then
    check "with $*: serving" eval '[ "$state" = active ] && metrics >/dev/null'
  else
    check "with $*: not serving (state $state)" eval '[ "$state" != active ] && ! metrics >/dev/null'
  fi
  sd journalctl --no-pager -o cat -S "@$t0" -u kprobectl-serve 2>&1 | grep -v '^kprobectl-serve.service: Consumed' |
    sed 's/^/#   /'
  sd systemctl stop kprobectl-serve
  sd systemctl reset-failed kprobectl-serve 2>/dev/null
  check "... nothing left" nothing_ours || ours | sed 's/^/#   /'
}
with_setting serves CapabilityBoundingSet=
with_setting fails ProtectKernelTunables=yes
with_setting fails ProtectKernelTunables=yes ReadWritePaths=/sys/kernel/tracing
with_setting fails PrivateUsers=yes
rm -r $dropins

kill -KILL "$sd_pid" 2>/dev/null
wait "$unshared" 2>/dev/null
finish
