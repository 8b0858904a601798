//! `serve --http` and `gateway` on one thread (`--threads 1`, their default on one CPU): the
//! whole runtime is the process's main thread, and everything they do still works — calls
//! forwarded over HTTP and stdio, a reload on SIGHUP, traces sent at exit, a clean stop.

mod gateway_support;
mod support;

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gateway_support::{Dir, HttpGateway, PATIENCE, eventually, json, quoted, signal, stdio_upstream, text};
use mcp_testkit::process::ListeningProcess;
use nix::sys::signal::Signal;

/// The threads of process `pid` now.
fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map(|tasks| tasks.count()).unwrap_or(0)
}

fn gateway(config: &std::path::Path, threads: &str) -> HttpGateway {
    HttpGateway(ListeningProcess::start(support::command(&[
        "gateway",
        "--threads",
        threads,
        "--config",
        config.to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
    ])))
}

/// `tool` called through the gateway at `url` with `text` to echo: the text it answered.
fn echo(url: &str, tool: &str, said: &str) -> String {
    let (code, out, err) =
        gateway_support::through_url(url, &["call", tool, "--arg", &format!("text={said}")]);
    assert_eq!(code, 0, "{tool}: {err}");
    text(&json(&out))
}

#[test]
fn one_thread_serves_forwards_reloads_and_stops() {
    let upstream = support::serve_http(&["--threads", "1"]);
    let dir = Dir::new("one-thread");
    let web =
        format!("[servers.web]\nurl = {}\nprefix = \"web\"\nnaming = \"always\"\n", quoted(upstream.url()));
    let config = dir.write_config(&[web.clone(), stdio_upstream("local", "")].concat());
    let mut gateway = gateway(&config, "1");

    // Both kinds of upstream answer through it, and many calls at once are all answered.
    assert_eq!(echo(gateway.url(), "web__echo", "over http"), "over http");
    assert_eq!(echo(gateway.url(), "echo", "over stdio"), "over stdio");
    let url = gateway.url().to_owned();
    let callers: Vec<_> = (0..8)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                echo(&url, if i % 2 == 0 { "web__echo" } else { "echo" }, &format!("n{i}"))
            })
        })
        .collect();
    for (i, caller) in callers.into_iter().enumerate() {
        assert_eq!(caller.join().unwrap(), format!("n{i}"));
    }

    // One thread each: the runtime is the main thread (a multi-thread runtime has its workers
    // besides; see the test below).
    assert_eq!(threads_of(gateway.id()), 1, "the gateway's threads");
    assert_eq!(threads_of(upstream.id()), 1, "serve's threads");

    // SIGHUP: the configuration is read again, on the same thread.
    dir.write_config(&[web, stdio_upstream("more", "prefix = \"more\"\nnaming = \"always\"")].concat());
    signal(gateway.id(), Signal::SIGHUP);
    eventually("the reloaded upstream to answer", PATIENCE, || {
        let (code, out, err) =
            gateway_support::through_url(&url, &["call", "more__echo", "--arg", "text=reloaded"]);
        if code == 0 { Ok(text(&json(&out))) } else { Err(err) }
    });
    assert_eq!(echo(&url, "web__echo", "still"), "still");

    // SIGTERM: a clean stop, its stdio upstreams with it.
    signal(gateway.id(), Signal::SIGTERM);
    let status = gateway.wait_exit(PATIENCE).expect("the gateway stops");
    assert!(status.success(), "{status:?}: {}", gateway.stderr());
    assert!(!gateway.stderr().contains("panicked"), "{}", gateway.stderr());
}

/// An upstream named `localhost` is reached without a name lookup: the lookup would run on a
/// blocking thread, and the gateway would have two threads from then on. The upstream listens on
/// 127.0.0.1 only, so the IPv6 loopback, tried first, refuses and the next address is used.
#[test]
fn a_localhost_upstream_is_reached_without_a_second_thread() {
    let upstream = support::serve_http(&["--threads", "1"]);
    let url = upstream.url().replace("127.0.0.1", "localhost");
    assert!(url.contains("://localhost:"), "{url}");
    let dir = Dir::new("one-thread-localhost");
    let config = dir.write_config(&format!("[servers.web]\nurl = {}\n", quoted(&url)));
    let gateway = gateway(&config, "1");
    assert_eq!(echo(gateway.url(), "echo", "to localhost"), "to localhost");
    assert_eq!(threads_of(gateway.id()), 1, "the gateway's threads");
}

#[test]
fn threads_asked_for_are_the_workers_the_runtime_has() {
    let upstream = support::serve_http(&["--threads", "3"]);
    let dir = Dir::new("three-threads");
    let config = dir.write_config(&stdio_upstream("local", ""));
    let gateway = gateway(&config, "3");
    assert_eq!(echo(gateway.url(), "echo", "three"), "three");
    // Three workers and the main thread, at least (the blocking pool may add its own).
    assert!(threads_of(gateway.id()) >= 4, "the gateway has {} threads", threads_of(gateway.id()));
    assert!(threads_of(upstream.id()) >= 4, "serve has {} threads", threads_of(upstream.id()));
    let (code, _, err) = support::run(&["gateway", "--threads", "0", "--config", config.to_str().unwrap()]);
    assert_eq!(code, 2, "--threads 0 is refused: {err}");
    assert!(err.contains("--threads"), "{err}");
}

/// A receiver of OTLP/HTTP exports on 127.0.0.1:0, on a thread of its own: the bodies posted to
/// `/v1/traces`, in order.
fn trace_receiver() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let sink = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let sink = sink.clone();
            std::thread::spawn(move || {
                // One request a connection: the head, then a `Content-Length` body.
                let mut seen = Vec::new();
                let mut buf = [0u8; 8192];
                let head_end = loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    seen.extend_from_slice(&buf[..n]);
                    if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let head = String::from_utf8_lossy(&seen[..head_end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while seen.len() < head_end + length {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                if head.starts_with("post /v1/traces ") {
                    sink.lock().unwrap().push(seen[head_end..head_end + length].to_vec());
                }
                use std::io::Write;
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            });
        }
    });
    (url, bodies)
}

#[test]
fn a_gateway_on_one_thread_sends_its_last_traces_when_it_stops() {
    let (endpoint, bodies) = trace_receiver();
    let dir = Dir::new("one-thread-traces");
    let config = dir.write_config(&stdio_upstream("local", ""));
    let mut command = support::command(&[
        "gateway",
        "--threads",
        "1",
        "--config",
        config.to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
    ]);
    // A batch is due only after an hour: what reaches the receiver was sent at exit.
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "3600000")
        .env("OTEL_SERVICE_NAME", "one-thread");
    let mut gateway = HttpGateway(ListeningProcess::start(command));
    assert_eq!(echo(gateway.url(), "echo", "traced"), "traced");
    std::thread::sleep(Duration::from_millis(200));
    assert!(bodies.lock().unwrap().is_empty(), "nothing exported before the batch is due");
    // The exports are a task of the gateway's runtime: tracing adds no thread.
    assert_eq!(threads_of(gateway.id()), 1, "the traced gateway's threads");

    signal(gateway.id(), Signal::SIGTERM);
    let status = gateway.wait_exit(PATIENCE).expect("the gateway stops");
    assert!(status.success(), "{status:?}: {}", gateway.stderr());
    let bodies = bodies.lock().unwrap();
    let all: Vec<u8> = bodies.concat();
    let has = |needle: &[u8]| all.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"one-thread"), "the gateway's spans were exported at exit ({} exports)", bodies.len());
    assert!(has(b"tools/call echo"), "the call's span is among them");
}

/// `serve --http` on one thread with traces: still one thread (a second one, even idle, costs
/// every allocation glibc's locks), full batches sent at once, and the rest at exit.
#[test]
fn serve_on_one_thread_traces_without_a_thread_and_sends_the_rest_when_it_stops() {
    let (endpoint, bodies) = trace_receiver();
    let mut command = support::command(&["serve", "--http", "127.0.0.1:0", "--threads", "1"]);
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "3600000")
        .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
        .env("OTEL_SERVICE_NAME", "serve-one-thread");
    let mut serve = HttpGateway(ListeningProcess::start(command));
    for said in ["first", "second", "third"] {
        assert_eq!(echo(serve.url(), "echo", said), said);
    }
    // Batches of two go at once, though the delay is an hour.
    let deadline = std::time::Instant::now() + PATIENCE;
    while bodies.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!bodies.lock().unwrap().is_empty(), "full batches are sent at once");
    assert_eq!(threads_of(serve.id()), 1, "the traced server's threads");

    signal(serve.id(), Signal::SIGTERM);
    let status = serve.wait_exit(PATIENCE).expect("serve stops");
    assert!(status.success(), "{status:?}: {}", serve.stderr());
    let bodies = bodies.lock().unwrap();
    let count = |needle: &[u8]| -> usize {
        bodies.iter().map(|body| body.windows(needle.len()).filter(|w| *w == needle).count()).sum()
    };
    assert_eq!(count(b"tools/call echo"), 3, "every call's span, the last ones sent at exit");
    assert_eq!(count(b"serve-one-thread"), bodies.len(), "the service names every export");
}
