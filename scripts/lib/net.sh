# Loopback ports for the benchmark scripts, sourced from the repository root: a free port, and a
# wait until something listens on one.

# free_port: a port nothing listens on now, on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT: returns once something accepts connections on 127.0.0.1:PORT (10 s at most;
# then an error on stderr and a failed return, which stops a `set -e` script).
wait_port() {
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "error: nothing listens on port $1" >&2
  return 1
}
