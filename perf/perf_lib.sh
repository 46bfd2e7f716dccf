# Shell functions the perf/*.sh harnesses share; sourced, never run. Each function writes its
# messages under the harness's name, $perf_name (set it before sourcing).

# perf_own_priority "$0" "$@": as the first command, gives the run its own scheduling group at
# nice -20 on a shared machine (re-executing the script under setsid once); BT_PERF_PRIORITY=0
# keeps the default. Sets $priority to what the run got, for the report.
perf_own_priority() {
  if [[ ${BT_PERF_PRIORITY:-1} == 1 && -z ${BT_PERF_IN_SESSION:-} ]] && command -v setsid >/dev/null; then
    export BT_PERF_IN_SESSION=1
    exec setsid -w "$@"
  fi
  priority="default (BT_PERF_PRIORITY=0 or no setsid)"
  if [[ -n ${BT_PERF_IN_SESSION:-} ]] && { echo -20 >/proc/self/autogroup; } 2>/dev/null; then
    renice -n -20 -p $$ >/dev/null 2>&1 || true
    priority="own autogroup at nice -20"
  fi
}

# perf_require_built HINT FILE...: each FILE is an executable, or exit 1 naming it and HINT.
perf_require_built() {
  local hint=$1 f
  shift
  for f in "$@"; do
    [[ -x $f ]] || { echo "$perf_name: $f is missing ($hint)" >&2; exit 1; }
  done
}

# perf_require_tools TOOL...: each TOOL is on PATH, or exit 1 naming it.
perf_require_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "$perf_name: $t not on PATH (scripts/setup)" >&2; exit 1; }
  done
}

# perf_workdir PREFIX: a temporary directory in $work, removed on exit with every process whose
# pid is in the array $pids (SIGTERM, then waited for).
perf_workdir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  pids=()
  trap perf_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
perf_cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}

# free_port: a free loopback port (the kernel's pick; for programs that cannot bind port 0).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# perf_start_redis [PREFIX...]: a throwaway redis-server on a free port, without persistence,
# started through PREFIX (e.g. taskset -c 0) when given; sets $redis_port and $redis_pid, adds it
# to $pids, and waits until it answers (exit 1 after 5 s).
perf_start_redis() {
  redis_port=$(free_port)
  "$@" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    >"$work/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 1 100); do
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$perf_name: redis-server did not start (log: $work/redis.log)" >&2
  exit 1
}

# perf_axon_ready NAME: "PORT HOTKEY" from the ready line (its AxonInfo JSON) of the bt-axon
# started with its stdout in $work/NAME.out and its stderr in $work/NAME.err; waits up to 20 s,
# then exits 1 with that stderr.
perf_axon_ready() {
  local name=$1 info=
  for _ in $(seq 1 200); do
    info=$(grep -m 1 '"port"' "$work/$name.out" 2>/dev/null || true)
    [[ -n $info ]] && break
    sleep 0.1
  done
  [[ -n $info ]] || { echo "$perf_name: bt-axon ($name) did not start" >&2; cat "$work/$name.err" >&2; exit 1; }
  python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(j["port"], j["hotkey"])' "$info"
}
