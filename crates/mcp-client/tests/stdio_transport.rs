//! The stdio client transport against real child processes (`sh` scripts and `cat`).
//!
//! Every test stops every process it starts (through `close()`, or by checking that the
//! transport killed it). Waits are bounded generously (seconds), so a loaded machine cannot
//! make them flake; the few duration checks are lower bounds, or upper bounds far below a
//! configured timeout the behaviour must not wait for.
#![cfg(all(unix, feature = "stdio"))]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_client::transport::stdio::{RestartPolicy, STDERR_TARGET, StdioCommand, StdioTransport};
use mcp_client::transport::{
    Inbound, InboundReceiver, Outgoing, OutgoingKind, ShutdownTimeouts, Transport, TransportError,
    TransportKind,
};
use mcp_types::RequestId;

/// How long any single expected event may take.
const WAIT: Duration = Duration::from_secs(5);

fn sh(script: &str) -> StdioCommand {
    StdioCommand::new("sh").arg("-c").arg(script)
}

fn short_timeouts() -> ShutdownTimeouts {
    ShutdownTimeouts::default()
        .with_after_stdin_close(Duration::from_millis(200))
        .with_after_sigterm(Duration::from_millis(200))
}

fn start(cmd: StdioCommand) -> (Arc<StdioTransport>, InboundReceiver) {
    let (tx, rx) = mcp_client::transport::inbound_channel();
    let transport = StdioTransport::spawn(cmd, tx).expect("the child starts");
    (transport, rx)
}

fn message(body: impl Into<Bytes>) -> Outgoing {
    Outgoing {
        body: body.into(),
        kind: OutgoingKind::Notification { method: "test/line".into() },
        protocol_version: None,
    }
}

async fn send(transport: &StdioTransport, body: impl Into<Bytes>) -> Result<(), TransportError> {
    tokio::time::timeout(WAIT, transport.send(message(body))).await.expect("send finishes in time")
}

async fn next(rx: &mut InboundReceiver) -> Inbound {
    tokio::time::timeout(WAIT, rx.recv()).await.expect("an event in time").expect("the channel is open")
}

async fn next_message(rx: &mut InboundReceiver) -> Bytes {
    match next(rx).await {
        Inbound::Message(bytes) => bytes,
        other => panic!("expected a message, got {other:?}"),
    }
}

async fn next_json(rx: &mut InboundReceiver) -> serde_json::Value {
    let bytes = next_message(rx).await;
    serde_json::from_slice(&bytes).expect("the line is JSON")
}

/// Closes the transport and checks it ends with exactly one `Closed(Closed)`.
async fn close(transport: &StdioTransport, rx: &mut InboundReceiver) {
    tokio::time::timeout(Duration::from_secs(20), transport.close()).await.expect("close returns");
    loop {
        match next(rx).await {
            Inbound::Closed(TransportError::Closed) => break,
            Inbound::Message(_) => {}
            other => panic!("expected Closed(Closed), got {other:?}"),
        }
    }
    assert_no_more_events(rx).await;
}

/// Nothing follows `Closed`: the sender is dropped or stays silent.
async fn assert_no_more_events(rx: &mut InboundReceiver) {
    match tokio::time::timeout(Duration::from_millis(200), rx.recv()).await {
        Err(_) | Ok(None) => {}
        Ok(Some(event)) => panic!("an event after Closed: {event:?}"),
    }
}

/// Whether `pid` no longer runs (gone, or a zombie nobody reaped yet).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_gone(pid: u32) {
    let deadline = Instant::now() + WAIT;
    while !process_gone(pid) {
        assert!(Instant::now() < deadline, "process {pid} still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn expect_exited(event: Inbound) -> String {
    match event {
        Inbound::Closed(TransportError::Exited(status)) => status,
        other => panic!("expected Closed(Exited), got {other:?}"),
    }
}

#[tokio::test]
async fn round_trip_through_cat() {
    let (transport, mut rx) = start(StdioCommand::new("cat"));
    assert_eq!(transport.kind(), TransportKind::Stdio);
    let pid = transport.pid().expect("a pid");

    for i in 0..5 {
        send(&transport, format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"i":{i}}}}}"#)).await.unwrap();
    }
    for i in 0..5 {
        let json = next_json(&mut rx).await;
        assert_eq!(json["params"]["i"], i);
    }

    // 1 MiB in one message: more than any pipe buffer, so the writer and the reader must run
    // side by side.
    let big = format!(r#"{{"data":"{}"}}"#, "x".repeat(1024 * 1024));
    send(&transport, big.clone()).await.unwrap();
    assert_eq!(next_message(&mut rx).await, big.as_bytes());

    // A pretty-printed body still travels as one line.
    send(&transport, "{\n  \"a\": 1\n}").await.unwrap();
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"a": 1}));

    // Ignored on stdio.
    transport.abandon(&RequestId::Number(1));

    close(&transport, &mut rx).await;
    wait_gone(pid).await;
    assert_eq!(transport.pid(), None);
    assert!(matches!(send(&transport, "{}").await, Err(TransportError::NotSent(_))));
    // Idempotent: a second close returns and pushes nothing.
    tokio::time::timeout(WAIT, transport.close()).await.expect("second close returns");
    assert_no_more_events(&mut rx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sends_never_interleave() {
    let (transport, mut rx) = start(StdioCommand::new("cat"));
    let mut tasks = Vec::new();
    for i in 0..16u8 {
        let transport = Arc::clone(&transport);
        tasks.push(tokio::spawn(async move {
            let fill = char::from(b'a' + i).to_string().repeat(100 * 1024);
            send(&transport, format!(r#"{{"fill":"{fill}"}}"#)).await
        }));
    }
    for task in tasks {
        task.await.expect("the task ran").expect("sent");
    }
    let mut seen = Vec::new();
    for _ in 0..16 {
        let json = next_json(&mut rx).await;
        let fill = json["fill"].as_str().expect("a fill").to_owned();
        assert_eq!(fill.len(), 100 * 1024);
        let first = fill.chars().next().expect("not empty");
        assert!(fill.chars().all(|c| c == first), "two messages were mixed");
        seen.push(first);
    }
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 16);
    close(&transport, &mut rx).await;
}

#[tokio::test]
async fn lines_queued_together_go_out_whole_and_in_order() {
    let (transport, mut rx) = start(StdioCommand::new("cat"));
    let count = 1000;
    // Mostly small lines, with some larger than a pipe holds: the writer then resumes a
    // batch of coalesced lines part way, many times.
    let body = |i: usize| {
        let pad = if i % 100 == 7 { "p".repeat(200 * 1024) } else { String::new() };
        format!(r#"{{"n":{i},"pad":"{pad}"}}"#)
    };
    let sender = tokio::spawn({
        let transport = Arc::clone(&transport);
        async move {
            let mut sends: Vec<_> = (0..count).map(|i| Some(transport.send(message(body(i))))).collect();
            let mut results: Vec<Option<Result<(), TransportError>>> = (0..count).map(|_| None).collect();
            // Each `send` queues its line when first polled: all of them, in order, at once.
            std::future::poll_fn(|cx| {
                for (send, result) in sends.iter_mut().zip(&mut results) {
                    if let Some(future) = send
                        && let std::task::Poll::Ready(done) = future.as_mut().poll(cx)
                    {
                        *result = Some(done);
                        *send = None;
                    }
                }
                std::task::Poll::Ready(())
            })
            .await;
            for (send, result) in sends.into_iter().zip(&mut results) {
                if let Some(future) = send {
                    *result = Some(future.await);
                }
            }
            results
        }
    });
    for i in 0..count {
        assert_eq!(next_message(&mut rx).await, body(i).as_bytes(), "line {i}");
    }
    for (i, result) in sender.await.expect("the task ran").into_iter().enumerate() {
        assert!(matches!(result, Some(Ok(()))), "send {i}: {result:?}");
    }
    close(&transport, &mut rx).await;
}

#[tokio::test]
async fn a_dropped_send_still_writes_its_whole_line() {
    let (transport, mut rx) = start(StdioCommand::new("cat"));
    let big = format!(r#"{{"data":"{}"}}"#, "z".repeat(512 * 1024));
    // Polled once (which queues the line), then dropped long before the line can be written.
    tokio::select! {
        biased;
        _ = transport.send(message(big.clone())) => panic!("512 KiB cannot be written in one poll"),
        () = std::future::ready(()) => {}
    }
    send(&transport, r#"{"after":true}"#).await.unwrap();
    assert_eq!(next_message(&mut rx).await, big.as_bytes());
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"after": true}));
    close(&transport, &mut rx).await;
}

#[tokio::test]
async fn close_fails_a_send_stuck_on_a_child_that_never_reads() {
    let (transport, mut rx) = start(sh("exec sleep 1000").shutdown_timeouts(short_timeouts()));
    let pid = transport.pid().expect("a pid");
    let stuck = tokio::spawn({
        let transport = Arc::clone(&transport);
        // Far more than a pipe holds: the write blocks until the pipe breaks.
        async move { transport.send(message(vec![b'x'; 4 * 1024 * 1024])).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    close(&transport, &mut rx).await;
    let result = tokio::time::timeout(WAIT, stuck).await.expect("the send ends").expect("the task ran");
    assert!(matches!(result, Err(TransportError::Lost(_) | TransportError::NotSent(_))), "{result:?}");
    wait_gone(pid).await;
}

/// Collects the events logged under one target.
#[derive(Clone, Default)]
struct Capture {
    target: &'static str,
    lines: Arc<Mutex<Vec<String>>>,
}

struct MessageField(Option<String>);

impl tracing::field::Visit for MessageField {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() == self.target {
            let mut field = MessageField(None);
            event.record(&mut field);
            if let Some(line) = field.0 {
                self.lines.lock().unwrap().push(line);
            }
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

// Single-threaded, so the thread-local subscriber sees the transport's tasks.
#[tokio::test(flavor = "current_thread")]
async fn stderr_is_logged_never_delivered() {
    let capture = Capture { target: STDERR_TARGET, ..Capture::default() };
    let _guard = tracing::subscriber::set_default(capture.clone());

    // 3000 stderr lines (~150 KB, more than a pipe buffer) before reading anything, then one
    // stderr line per echoed line: a child whose stderr were not drained would block.
    let script = r#"
        i=0
        while [ $i -lt 3000 ]; do
            echo "noise $i: the quick brown fox jumps over the lazy dog" >&2
            i=$((i+1))
        done
        printf 'bad utf8 \377 and a {"brace"}\n' >&2
        while IFS= read -r line; do
            echo "got a line" >&2
            printf '%s\n' "$line"
        done
    "#;
    let (transport, mut rx) = start(sh(script));
    for i in 0..20 {
        send(&transport, format!(r#"{{"i":{i}}}"#)).await.unwrap();
    }
    for i in 0..20 {
        assert_eq!(next_json(&mut rx).await, serde_json::json!({ "i": i }));
    }
    close(&transport, &mut rx).await;

    let lines = capture.lines.lock().unwrap().clone();
    assert!(lines.iter().any(|l| l == "noise 0: the quick brown fox jumps over the lazy dog"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("noise 2999:")));
    assert!(lines.iter().any(|l| l == "bad utf8 \u{fffd} and a {\"brace\"}"));
    assert_eq!(lines.iter().filter(|l| *l == "got a line").count(), 20);
}

#[tokio::test]
async fn crash_pushes_one_closed_exited() {
    let (transport, mut rx) = start(sh("read line; exit 3"));
    let pid = transport.pid().expect("a pid");
    send(&transport, r#"{"jsonrpc":"2.0","method":"x"}"#).await.unwrap();
    let sent = Instant::now();

    let status = expect_exited(next(&mut rx).await);
    eprintln!("Closed(Exited) {:?} after the crash", sent.elapsed());
    assert!(status.contains('3'), "{status}");
    assert_no_more_events(&mut rx).await;
    wait_gone(pid).await;

    assert_eq!(transport.pid(), None);
    assert!(matches!(send(&transport, "{}").await, Err(TransportError::NotSent(_))));
    // Closing after the crash returns and pushes no second Closed.
    tokio::time::timeout(WAIT, transport.close()).await.expect("close returns");
    assert_no_more_events(&mut rx).await;
}

#[tokio::test]
async fn output_written_before_a_crash_comes_first() {
    let (transport, mut rx) = start(sh(r#"echo '{"a":1}'; printf '{"a":2}'; exit 0"#));
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"a": 1}));
    // Even the unterminated last line.
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"a": 2}));
    let status = expect_exited(next(&mut rx).await);
    assert!(status.contains('0'), "{status}");
    assert_no_more_events(&mut rx).await;
    drop(transport);
}

#[tokio::test]
async fn a_grandchild_holding_stdout_does_not_hide_the_exit() {
    // The background `sleep` keeps the stdout pipe open after `sh` exits; it is in the child's
    // process group, so the transport kills it and sees the end of stdout.
    let (transport, mut rx) = start(sh(r#"sleep 1000 & echo "{\"bg\":$!}"; read line; exit 4"#));
    let bg = next_json(&mut rx).await["bg"].as_u64().expect("a pid");
    let bg = u32::try_from(bg).expect("a pid");
    send(&transport, "{}").await.unwrap();
    let status = expect_exited(next(&mut rx).await);
    assert!(status.contains('4'), "{status}");
    wait_gone(bg).await;
    transport.close().await;
}

#[tokio::test]
async fn a_child_closing_its_stdout_is_ended() {
    let (transport, mut rx) = start(sh("exec 1>&-; while :; do sleep 1; done"));
    let pid = transport.pid().expect("a pid");
    // The child lives on without stdout: useless, so it is killed after a grace period.
    let status = match tokio::time::timeout(Duration::from_secs(15), rx.recv()).await {
        Ok(Some(event)) => expect_exited(event),
        other => panic!("expected Closed(Exited), got {other:?}"),
    };
    assert!(status.contains("SIGKILL") || status.contains('9'), "{status}");
    wait_gone(pid).await;
    transport.close().await;
    assert_no_more_events(&mut rx).await;
}

#[tokio::test]
async fn restart_after_a_crash() {
    let policy = RestartPolicy::default()
        .with_max_restarts(5)
        .with_initial_backoff(Duration::from_millis(10))
        .with_max_backoff(Duration::from_millis(100));
    // Each child announces its pid, echoes one line and exits.
    let script = r#"echo "{\"pid\":$$}"; IFS= read -r line; printf '%s\n' "$line"; exit 1"#;
    let (transport, mut rx) = start(sh(script).restart(policy));

    let first = next_json(&mut rx).await["pid"].as_u64().expect("a pid");
    assert_eq!(transport.pid().map(u64::from), Some(first));
    send(&transport, r#"{"n":1}"#).await.unwrap();
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"n": 1}));
    match next(&mut rx).await {
        Inbound::Restarted { error: TransportError::Exited(status) } => {
            assert!(status.contains('1'), "{status}")
        }
        other => panic!("expected Restarted, got {other:?}"),
    }
    let second = next_json(&mut rx).await["pid"].as_u64().expect("a pid");
    assert_ne!(first, second);
    assert_eq!(transport.pid().map(u64::from), Some(second));
    wait_gone(u32::try_from(first).expect("a pid")).await;

    send(&transport, r#"{"n":2}"#).await.unwrap();
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"n": 2}));

    // The second child exits too and a third one starts; close stops whichever runs.
    transport.close().await;
    loop {
        match next(&mut rx).await {
            Inbound::Closed(TransportError::Closed) => break,
            Inbound::Message(_) | Inbound::Restarted { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_no_more_events(&mut rx).await;
    assert_eq!(transport.pid(), None);
}

#[tokio::test]
async fn restarts_are_given_up_after_the_limit() {
    let policy = RestartPolicy::default()
        .with_max_restarts(2)
        .with_initial_backoff(Duration::from_millis(10))
        .with_max_backoff(Duration::from_millis(20));
    let (transport, mut rx) = start(sh("exit 7").restart(policy));
    for _ in 0..2 {
        assert!(matches!(next(&mut rx).await, Inbound::Restarted { error: TransportError::Exited(_) }));
    }
    let status = expect_exited(next(&mut rx).await);
    assert!(status.contains('7'), "{status}");
    assert_no_more_events(&mut rx).await;
    assert!(matches!(send(&transport, "{}").await, Err(TransportError::NotSent(_))));
    transport.close().await;
    assert_no_more_events(&mut rx).await;
}

#[tokio::test]
async fn close_kills_a_child_that_ignores_stdin_and_sigterm() {
    // `trap "" TERM` is inherited by the background `sleep`, so only SIGKILL ends either.
    let script = r#"trap "" TERM; sleep 1000 & echo "{\"bg\":$!}"; while :; do sleep 1; done"#;
    let (transport, mut rx) = start(sh(script).shutdown_timeouts(short_timeouts()));
    let pid = transport.pid().expect("a pid");
    let bg = u32::try_from(next_json(&mut rx).await["bg"].as_u64().expect("a pid")).expect("a pid");

    let started = Instant::now();
    close(&transport, &mut rx).await;
    // Both waits were used up: it took SIGKILL.
    assert!(started.elapsed() >= Duration::from_millis(400), "{:?}", started.elapsed());
    wait_gone(pid).await;
    wait_gone(bg).await;
}

#[tokio::test]
async fn close_stops_a_child_honouring_sigterm() {
    // Ignores stdin; SIGTERM reaches the foreground `sleep` (same group) and the trap exits.
    let script = r#"trap "exit 0" TERM; echo '{}'; while :; do sleep 1; done"#;
    let timeouts = ShutdownTimeouts::default()
        .with_after_stdin_close(Duration::from_millis(200))
        .with_after_sigterm(Duration::from_secs(60));
    let (transport, mut rx) = start(sh(script).shutdown_timeouts(timeouts));
    let pid = transport.pid().expect("a pid");
    next_message(&mut rx).await;
    let started = Instant::now();
    close(&transport, &mut rx).await;
    // Far below the 60 s before SIGKILL.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    wait_gone(pid).await;
}

#[tokio::test]
async fn close_lets_cat_exit_on_end_of_input() {
    let timeouts = ShutdownTimeouts::default()
        .with_after_stdin_close(Duration::from_secs(60))
        .with_after_sigterm(Duration::from_secs(60));
    let (transport, mut rx) = start(StdioCommand::new("cat").shutdown_timeouts(timeouts));
    let pid = transport.pid().expect("a pid");
    send(&transport, "{}").await.unwrap();
    next_message(&mut rx).await;
    let started = Instant::now();
    close(&transport, &mut rx).await;
    // Far below the 60 s before SIGTERM: closing stdin was enough.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    wait_gone(pid).await;
}

#[tokio::test]
async fn dropping_the_transport_stops_the_child() {
    let (transport, mut rx) = start(StdioCommand::new("cat"));
    let pid = transport.pid().expect("a pid");
    drop(transport);
    wait_gone(pid).await;
    // Nobody closed it, so no Closed(Closed) is promised; there is no Closed(Exited) either.
    assert!(matches!(tokio::time::timeout(Duration::from_millis(200), rx.recv()).await, Err(_) | Ok(None)));
}

#[test]
fn dropping_the_runtime_kills_the_child() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let script = r#"trap "" TERM; sleep 1000 & echo "{\"bg\":$!}"; while :; do sleep 1; done"#;
    let (transport, pid, bg) = runtime.block_on(async {
        let (transport, mut rx) = start(sh(script));
        let pid = transport.pid().expect("a pid");
        let bg = u32::try_from(next_json(&mut rx).await["bg"].as_u64().expect("a pid")).expect("a pid");
        (transport, pid, bg)
    });
    drop(runtime);
    let deadline = Instant::now() + WAIT;
    while !(process_gone(pid) && process_gone(bg)) {
        assert!(Instant::now() < deadline, "the child or its group survived");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(transport);
}

#[tokio::test]
async fn env_args_and_cwd_reach_the_child() {
    let dir = std::env::temp_dir().canonicalize().expect("a temp dir");
    let script = r#"printf '{"v":"%s","a":"%s","d":"%s"}\n' "$FOO" "$1" "$(pwd -P)"; cat"#;
    let cmd = StdioCommand::new("sh")
        .args(["-c", script, "sh"])
        .arg("first arg")
        .env("FOO", "bar baz")
        .current_dir(&dir);
    let (transport, mut rx) = start(cmd);
    let json = next_json(&mut rx).await;
    assert_eq!(json["v"], "bar baz");
    assert_eq!(json["a"], "first arg");
    assert_eq!(json["d"], dir.to_str().expect("a UTF-8 path"));
    close(&transport, &mut rx).await;
}

#[tokio::test]
async fn env_clear_leaves_only_the_given_variables() {
    let script = r#"printf '{"home":"%s","only":"%s"}\n' "${HOME-unset}" "$ONLY"; cat"#;
    let cmd = StdioCommand::new("/bin/sh").arg("-c").arg(script).env_clear(true).env("ONLY", "1");
    let (transport, mut rx) = start(cmd);
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"home": "unset", "only": "1"}));
    close(&transport, &mut rx).await;
}

/// By default a child gets the minimal environment: `PATH` and `HOME` yes, the rest of the
/// client's (here: the variables cargo sets for a test) no; `inherit_env(true)` passes it all.
#[tokio::test]
async fn a_child_gets_a_minimal_environment_unless_told_to_inherit() {
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some(), "cargo sets it for tests");
    let script = r#"printf '{"path":"%s","home":"%s","cargo":"%s","given":"%s"}\n' "${PATH:+set}" "${HOME:+set}" "${CARGO_MANIFEST_DIR:+set}" "$GIVEN"; cat"#;
    let command = || StdioCommand::new("/bin/sh").arg("-c").arg(script).env("GIVEN", "1");
    let (transport, mut rx) = start(command());
    assert_eq!(
        next_json(&mut rx).await,
        serde_json::json!({"path": "set", "home": "set", "cargo": "", "given": "1"}),
        "minimal by default"
    );
    close(&transport, &mut rx).await;
    let (transport, mut rx) = start(command().inherit_env(true));
    assert_eq!(
        next_json(&mut rx).await,
        serde_json::json!({"path": "set", "home": "set", "cargo": "set", "given": "1"}),
        "inherited"
    );
    close(&transport, &mut rx).await;
}

#[tokio::test]
async fn an_over_long_line_is_skipped() {
    let (transport, mut rx) = start(StdioCommand::new("cat").max_line(1000));
    send(&transport, format!(r#"{{"long":"{}"}}"#, "y".repeat(2000))).await.unwrap();
    send(&transport, r#"{"short":true}"#).await.unwrap();
    assert_eq!(next_json(&mut rx).await, serde_json::json!({"short": true}));
    close(&transport, &mut rx).await;
}

#[tokio::test]
async fn a_missing_program_is_not_started() {
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    match StdioTransport::spawn(StdioCommand::new("/nonexistent/mcp-server"), tx) {
        Err(TransportError::NotSent(text)) => assert!(text.contains("/nonexistent/mcp-server"), "{text}"),
        Err(other) => panic!("expected NotSent, got {other:?}"),
        Ok(_) => panic!("a missing program started"),
    }
}

#[test]
fn spawn_outside_a_runtime_is_an_error() {
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    assert!(matches!(StdioTransport::spawn(StdioCommand::new("cat"), tx), Err(TransportError::NotSent(_))));
}
