# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# query QUERY VALUE: waits (30 s at most) until the Prometheus at
# 127.0.0.1:$pport answers the PromQL QUERY with VALUE, says "ok - ...";
# otherwise calls the sourcing script's fail. For the serve tests.
query() {
  local value=
  for _ in $(seq 150); do
    value=$(curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' \
        2>/dev/null || true)
    [ "$value" = "$2" ] && { echo "ok - $1 = $value"; return 0; }
    sleep 0.2
  done
  fail "$1: Prometheus says '${value:-nothing}', not $2"
}
