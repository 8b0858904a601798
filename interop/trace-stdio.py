"""Runs an MCP stdio server while logging its traffic, in order, to a file.

Usage: trace-stdio.py LOG SERVER_COMMAND [ARGS...]

Every line the client writes to the server's stdin ("client>"), the server writes to its stdout
("server>") or to its stderr ("stderr>") is appended to LOG with the seconds since start, in the
order this relay read them (so a request is always logged before the answer it caused). The streams
and the server's exit status are passed through unchanged. Put it in front of the server command
handed to an interop client:

    .cache/interop/venv/bin/python interop/python/client.py modern -- \\
        python3 interop/trace-stdio.py /tmp/trace.log target/debug/conformance-server --stdio

The interop tests do this by themselves when MCPKIT_INTEROP_TRACE names a directory (one log per
client there). Standard library only.
"""

import signal
import subprocess
import sys
import threading
import time


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    log_path, command = argv[0], argv[1:]
    start = time.monotonic()
    lock = threading.Lock()
    log = open(log_path, "ab", buffering=0)  # noqa: SIM115 - open for the life of the process

    def record(tag: bytes, line: bytes) -> None:
        with lock:
            stamp = f"{time.monotonic() - start:9.3f} ".encode()
            log.write(stamp + tag + line.rstrip(b"\n") + b"\n")

    record(b"=== ", f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {' '.join(command)}".encode())
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())

    def relay(source, sink, tag: bytes, close_sink: bool) -> None:
        try:
            for line in iter(source.readline, b""):
                record(tag, line)
                sink.write(line)
                sink.flush()
        except (BrokenPipeError, ValueError, OSError) as error:
            record(b"!!! ", f"{tag.decode().strip()} relay: {error}".encode())
        finally:
            if close_sink:
                try:
                    sink.close()
                except OSError:
                    pass

    to_server = threading.Thread(
        target=relay, args=(sys.stdin.buffer, server.stdin, b"client> ", True), daemon=True
    )
    from_server = threading.Thread(target=relay, args=(server.stdout, sys.stdout.buffer, b"server> ", False))
    server_log = threading.Thread(target=relay, args=(server.stderr, sys.stderr.buffer, b"stderr> ", False))
    for thread in (to_server, from_server, server_log):
        thread.start()
    status = server.wait()
    from_server.join()
    server_log.join()
    record(b"=== ", f"server exited with status {status}".encode())
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
