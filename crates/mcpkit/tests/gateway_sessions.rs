//! `sharing = "per-session"`: a stdio upstream with one child per downstream legacy session —
//! started by the session's first request to it, stopped and reaped when the session ends,
//! started again when it exited — and nothing leaked after thousands of sessions. The upstream
//! is `fixtures/session_server.sh`, whose tool answers with its process id.
#![cfg(target_os = "linux")] // /proc

mod gateway_support;
mod support;

use std::time::Duration;

use nix::sys::signal::Signal;

use gateway_support::{
    Conn, Dir, PATIENCE, eventually, gateway_http, marker, marker_env, pids_with, quoted, status, upstream,
};

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#;

/// A gateway configuration with one `per-session` upstream running the fixture, marked.
fn config(dir: &Dir, marker: &str) -> std::path::PathBuf {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session_server.sh");
    dir.write_config(&format!(
        "[servers.s]\ncommand = \"bash\"\nargs = [{}]\nsharing = \"per-session\"\nprotocol_version = \"2025-11-25\"\n{}\n",
        quoted(script.to_str().unwrap()),
        marker_env(marker)
    ))
}

/// The process id a `whoami` call answered with.
fn pid_of(reply: &(u16, Option<String>, String)) -> u32 {
    let (code, _, body) = reply;
    assert_eq!(*code, 200, "{body}");
    let at = body.find("pid ").unwrap_or_else(|| panic!("no pid in {body}"));
    body[at + 4..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
}

/// The processes whose parent is `parent`, zombies included (a child not reaped is one).
fn children_of(parent: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses; the last `)` ends it.
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else { continue };
        if rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            children.push(pid);
        }
    }
    children
}

/// The open file descriptors of `pid`.
fn fds_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count()
}

/// Kills every process with the marker when dropped, so a failing test leaves none behind.
struct Sweep(String);

impl Drop for Sweep {
    fn drop(&mut self) {
        for pid in pids_with(&self.0) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
}

/// Two sessions, two children, each kept for its session's requests; a stateless (2026-07-28)
/// request goes to the shared child; ending a session stops its child; a child that died is
/// started again by its session's next request; the status counts them.
#[test]
fn each_session_has_a_child_of_its_own() {
    let dir = Dir::new("per-session");
    let marker = marker("per-session");
    let _sweep = Sweep(marker.clone());
    let gateway = gateway_http(&config(&dir, &marker));
    let shared = gateway_support::the_pid_with(&marker);

    let mut conn = Conn::open(gateway.authority());
    let (a, b) = (conn.open_session(), conn.open_session());
    let pid_a = pid_of(&conn.post(Some(&a), CALL));
    let pid_b = pid_of(&conn.post(Some(&b), CALL));
    assert!(pid_a != pid_b && pid_a != shared && pid_b != shared, "{shared} {pid_a} {pid_b}");
    assert_eq!(pid_of(&conn.post(Some(&a), CALL)), pid_a, "a session keeps its child");
    let mut all = pids_with(&marker);
    all.sort_unstable();
    let mut expected = vec![shared, pid_a, pid_b];
    expected.sort_unstable();
    assert_eq!(all, expected);

    // Each child is told what its session's client declared (here: nothing), not the gateway's
    // capabilities; the shared child, the gateway's own.
    let (_, _, body) = conn.post(Some(&a), CALL);
    assert!(body.contains("elicitation no"), "{body}");
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"asking","version":"1"}}}"#;
    let (_, asking, _) = conn.post(None, initialize);
    let asking = asking.expect("a session id");
    conn.post(Some(&asking), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let (_, _, body) = conn.post(Some(&asking), CALL);
    assert!(body.contains("elicitation yes"), "{body}");
    let (code, _, body) = conn.delete(&asking);
    assert!(code == 200 || code == 204, "{code} {body}");

    // A stateless request belongs to no session: the shared child answers it.
    let (code, out, err) = gateway_support::through_url(gateway.url(), &["call", "whoami"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("pid {shared} elicitation yes")), "{out}");

    // Three children started; the asking session's is gone with its session.
    eventually("the status counting two sessions", PATIENCE, || {
        let s = status(&gateway);
        let u = upstream(&s, "s");
        let seen = (u["sharing"].as_str(), u["sessions"].as_u64(), u["session_starts"].as_u64());
        if seen == (Some("per-session"), Some(2), Some(3)) { Ok(()) } else { Err(s.to_string()) }
    });

    // The session ends: its child is stopped and reaped; the other is untouched.
    let (code, _, body) = conn.delete(&a);
    assert!(code == 200 || code == 204, "{code} {body}");
    eventually("session a's child gone", PATIENCE, || {
        let left = pids_with(&marker);
        if left.contains(&pid_a) { Err(format!("{left:?}")) } else { Ok(()) }
    });
    // Reaped, not left a zombie: an exited child stays the gateway's until it is waited for,
    // which the gateway does as the child exits (a moment after its command line is gone).
    eventually("session a's child reaped", PATIENCE, || {
        let children = children_of(gateway.id());
        if children.contains(&pid_a) {
            Err(format!("still a child of the gateway: {children:?}"))
        } else {
            Ok(())
        }
    });
    assert_eq!(upstream(&status(&gateway), "s")["sessions"], 1);

    // A child that died is started again by its session's next request.
    gateway_support::signal(pid_b, Signal::SIGKILL);
    let again = eventually("session b served by a new child", PATIENCE, || {
        let reply = conn.post(Some(&b), CALL);
        if reply.0 == 200 && reply.2.contains("pid ") { Ok(pid_of(&reply)) } else { Err(reply.2) }
    });
    assert!(again != pid_b && again != shared, "{again}");
    let (code, _, body) = conn.delete(&b);
    assert!(code == 200 || code == 204, "{code} {body}");
    eventually("only the shared child left", PATIENCE, || match pids_with(&marker)[..] {
        [only] if only == shared => Ok(()),
        ref other => Err(format!("{other:?}")),
    });
}

/// 10,000 downstream sessions, each opened, served by a child of its own and closed: afterwards
/// the gateway has exactly the one shared child (nothing left running, nothing left a zombie)
/// and no more open files than before.
#[test]
fn ten_thousand_sessions_leak_no_process_and_no_fd() {
    const CYCLES: usize = 10_000;
    const WORKERS: usize = 4;
    let dir = Dir::new("per-session-cycles");
    let marker = marker("per-session-cycles");
    let _sweep = Sweep(marker.clone());
    let gateway = gateway_http(&config(&dir, &marker));
    let shared = gateway_support::the_pid_with(&marker);
    let authority = gateway.authority().to_owned();

    let cycle = |conn: &mut Conn| {
        let session = conn.open_session();
        let pid = pid_of(&conn.post(Some(&session), CALL));
        assert_ne!(pid, shared);
        let (code, _, body) = conn.delete(&session);
        assert!(code == 200 || code == 204, "{code} {body}");
    };
    // Warm up (the gateway's first connections, buffers and tasks), then take the baseline.
    {
        let mut conn = Conn::open(&authority);
        for _ in 0..20 {
            cycle(&mut conn);
        }
    }
    let settled = |what: &str| {
        eventually(what, PATIENCE, || match children_of(gateway.id())[..] {
            [only] if only == shared => Ok(()),
            ref other => Err(format!("children {other:?}, the shared one is {shared}")),
        })
    };
    settled("the warm-up's children gone");
    let fds_before = fds_of(gateway.id());

    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                let mut conn = Conn::open(&authority);
                for _ in 0..CYCLES / WORKERS {
                    cycle(&mut conn);
                }
            });
        }
    });

    settled("every session's child gone (none running, none a zombie)");
    assert_eq!(pids_with(&marker), vec![shared]);
    let s = status(&gateway);
    let u = upstream(&s, "s");
    assert_eq!(u["sessions"], 0, "{s}");
    assert_eq!(u["session_starts"].as_u64(), Some(20 + CYCLES as u64), "{s}");
    // The test's connections are closed; what is left open is the gateway's own.
    let fds_after = eventually("the gateway's open files back to before", Duration::from_secs(10), || {
        let now = fds_of(gateway.id());
        if now <= fds_before { Ok(now) } else { Err(format!("{now} open, {fds_before} before")) }
    });
    assert!(fds_after <= fds_before);
}
