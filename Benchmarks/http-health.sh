#!/usr/bin/env bash
# GET /health over loopback with wrk: Sesame (release build, SQLite, JSON request log on) against a bare
# libmicrohttpd daemon answering a static reply with the same threading, measured in alternating rounds in
# the same run. Prints one JSON line: {name, value, unit, ceiling, ceilingName, ratio, target}.
# Usage: Benchmarks/http-health.sh [SECONDS_PER_ROUND] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-4}
rounds=${2:-4}
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

cc -O2 Benchmarks/BareMHD/bare-mhd.c -lmicrohttpd -o "$work/bare-mhd"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -fs "http://127.0.0.1:$1/health" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "server on $1 did not start" >&2; exit 1; }

bare_port=$(free_port)
"$work/bare-mhd" "$bare_port" >/dev/null 2>&1 &
pids+=($!)
sesame_port=$(free_port)
.build/release/sesame serve --db "sqlite:$work/sesame.db" --listen "127.0.0.1:$sesame_port" >/dev/null 2>&1 &
pids+=($!)
wait_for "$bare_port"
wait_for "$sesame_port"

rps() { wrk -t2 -c32 -d"${seconds}s" "http://127.0.0.1:$1/health" | awk '/Requests\/sec/ {print $2}'; }
best_bare=0
best_sesame=0
for _ in $(seq "$rounds"); do
    r=$(rps "$bare_port");   best_bare=$(python3 -c "print(max($best_bare, $r))")
    r=$(rps "$sesame_port"); best_sesame=$(python3 -c "print(max($best_sesame, $r))")
done
python3 -c "
import json
v, c = $best_sesame, $best_bare
print(json.dumps({'name': 'http_health_rps', 'value': round(v), 'unit': 'req/s', 'ceilingName': 'bare_libmicrohttpd_static_reply',
                  'ceiling': round(c), 'ratio': round(v / c, 3), 'target': 0.85}, sort_keys=True))"
