# What the benchmark scripts share about the programs they run, sourced from the repository
# root: a check that each binary is built, and a quiet stop of a process they started.

# require_built BIN...: exits with 2, naming the build command, when one of them is not built.
require_built() {
  for bin in "$@"; do
    [ -x "$bin" ] || { echo "error: $bin is not built (cargo build --release -p mcpkit -p bench)" >&2; exit 2; }
  done
}

# stop_quietly PID: stops PID and waits for it, saying nothing when it has already ended (or
# when PID is empty).
stop_quietly() {
  [ -n "${1:-}" ] || return 0
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
