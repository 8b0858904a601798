//! `mcpkit gateway --http` reloading its configuration while it serves: when the file changes
//! and on SIGHUP; a configuration it cannot serve is refused and the running one kept; clients
//! are told when the tool list changed.

mod gateway_support;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;

use gateway_support::{Dir, PATIENCE, eventually, json, stdio_upstream, through_url, tool_names};

/// The tool names the gateway at `url` lists now (`Err`: what went wrong).
fn listed(url: &str) -> Result<Vec<String>, String> {
    let (code, out, err) = through_url(url, &["list", "tools"]);
    if code != 0 {
        return Err(format!("exit {code}: {err}"));
    }
    Ok(tool_names(&json(&out)))
}

#[test]
fn a_changed_configuration_is_reloaded_and_a_bad_one_refused() {
    let dir = Dir::new("reload");
    let a = stdio_upstream("a", "");
    let config = dir.write_config(&a);
    let gateway = gateway_support::gateway_http(&config);
    let before = listed(gateway.url()).unwrap();
    assert!(before.iter().any(|n| n == "echo"), "{before:?}");
    assert!(!before.iter().any(|n| n.starts_with("c__")), "{before:?}");
    let own = format!("{}/second", gateway.url());
    assert!(listed(&own).is_err(), "no endpoint of an upstream not configured");

    // A second upstream, always prefixed.
    dir.write_config(&[a.clone(), stdio_upstream("second", "naming = \"always\"\nprefix = \"c\"")].concat());
    let names = until_c_is_listed(&gateway);
    assert!(names.iter().any(|n| n == "echo"), "a keeps its names: {names:?}");
    let (code, out, err) = through_url(gateway.url(), &["call", "c__add", r#"{"a":2,"b":2}"#]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["structuredContent"]["sum"], 4.0, "{out}");
    // The upstream the reload added has its own endpoint, under its own names.
    let own_names = listed(&own).unwrap();
    assert!(
        own_names.iter().any(|n| n == "add") && !own_names.iter().any(|n| n.starts_with("c__")),
        "{own_names:?}"
    );

    // Both unprefixed: a clash the `never` policy refuses; the running configuration stays.
    let clash = format!("[gateway]\nnaming = \"never\"\n\n{a}{}", stdio_upstream("second", "prefix = \"c\""));
    dir.write_config(&clash);
    eventually("the reload to be refused", PATIENCE, || {
        let stderr = gateway.stderr();
        if stderr.contains("reload refused") { Ok(()) } else { Err(stderr) }
    });
    let refused = gateway.stderr();
    let line = refused.lines().find(|l| l.contains("reload refused")).unwrap();
    assert!(line.contains("echo"), "names the clashing tool: {line}");
    let after = listed(gateway.url()).unwrap();
    assert!(after.iter().any(|n| n == "c__echo") && after.iter().any(|n| n == "echo"), "{after:?}");
    let status = gateway_support::status(&gateway);
    assert_eq!(gateway_support::upstream(&status, "second")["state"], "ready", "{status}");
}

/// The tool names, once `c__echo` is among them.
fn until_c_is_listed(gateway: &mcp_testkit::process::ListeningProcess) -> Vec<String> {
    eventually("c__echo to be listed", PATIENCE, || {
        let names = listed(gateway.url())?;
        if names.iter().any(|n| n == "c__echo") {
            Ok(names)
        } else {
            Err(format!("{names:?}\ngateway stderr:\n{}", gateway.stderr()))
        }
    })
}

#[cfg(unix)]
#[test]
fn sighup_reloads_an_unchanged_looking_file() {
    let dir = Dir::new("sighup");
    let a = stdio_upstream("a", "");
    let config = dir.write_config(&a);
    let gateway = gateway_support::gateway_http(&config);
    let before = listed(gateway.url()).unwrap();
    assert!(!before.iter().any(|n| n.starts_with("c__")), "{before:?}");

    // New contents under the old modification time: the watcher sees nothing.
    let mtime = std::fs::metadata(&config).unwrap().modified().unwrap();
    let next = dir.path().join("next.toml");
    std::fs::write(&next, [a, stdio_upstream("c", "naming = \"always\"")].concat()).unwrap();
    std::fs::File::options().write(true).open(&next).unwrap().set_modified(mtime).unwrap();
    std::fs::rename(&next, &config).unwrap();
    gateway_support::signal(gateway.id(), nix::sys::signal::Signal::SIGHUP);
    let names = until_c_is_listed(&gateway);
    assert!(names.iter().any(|n| n == "echo"), "{names:?}");
    // The new tables are served before the reload is logged (the retired upstreams are closed
    // in between): the line follows shortly.
    eventually("the reload to be logged", PATIENCE, || {
        let stderr = gateway.stderr();
        if stderr.contains("configuration reloaded") { Ok(()) } else { Err(stderr) }
    });
}

/// The rules of `policy_file` are reloaded with the configuration — when the rules file
/// changes, and on SIGHUP — and take effect for lists and calls at once; rules that do not
/// compile are refused and the running ones kept.
#[test]
fn the_policy_rules_are_reloaded_and_bad_ones_refused() {
    let dir = Dir::new("reload-policy");
    let rules = dir.path().join("policy.toml");
    std::fs::write(&rules, forbid("fail")).unwrap();
    let config =
        dir.write_config(&format!("[gateway]\npolicy_file = \"policy.toml\"\n{}", stdio_upstream("a", "")));
    let gateway = gateway_support::gateway_http(&config);
    let before = listed(gateway.url()).unwrap();
    assert!(before.iter().any(|n| n == "echo") && !before.iter().any(|n| n == "fail"), "{before:?}");

    // The rules file alone changes: `echo` is hidden and refused, `fail` is back.
    std::fs::write(&rules, forbid("echo")).unwrap();
    let names = eventually("the new rules to hide echo", PATIENCE, || {
        let names = listed(gateway.url())?;
        if names.iter().any(|n| n == "fail") && !names.iter().any(|n| n == "echo") {
            Ok(names)
        } else {
            Err(format!("{names:?}\ngateway stderr:\n{}", gateway.stderr()))
        }
    });
    assert!(names.iter().any(|n| n == "add"), "{names:?}");
    let (code, _, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=x"]);
    assert_ne!(code, 0);
    assert!(err.contains("Unknown tool: echo"), "{err}");
    assert!(gateway.stderr().contains("policy: 1 rule(s) in force"), "{}", gateway.stderr());

    // Rules that do not compile: refused, naming the rule; the rules in force stay.
    std::fs::write(&rules, "[[rule]]\nid = \"broken\"\neffect = \"forbid\"\nwhen = 'item.name =='\n")
        .unwrap();
    let refused = eventually("the broken rules to be refused", PATIENCE, || {
        let stderr = gateway.stderr();
        if stderr.contains("reload refused") { Ok(stderr) } else { Err(stderr) }
    });
    let line = refused.lines().find(|l| l.contains("reload refused")).unwrap();
    assert!(line.contains("\"broken\"") && line.contains("policy_file"), "{line}");
    let after = listed(gateway.url()).unwrap();
    assert!(!after.iter().any(|n| n == "echo") && after.iter().any(|n| n == "fail"), "{after:?}");

    // SIGHUP reads the rules again even when nothing looks changed.
    #[cfg(unix)]
    {
        let mtime = std::fs::metadata(&rules).unwrap().modified().unwrap();
        let next = dir.path().join("next-policy.toml");
        std::fs::write(&next, forbid("add")).unwrap();
        std::fs::File::options().write(true).open(&next).unwrap().set_modified(mtime).unwrap();
        std::fs::rename(&next, &rules).unwrap();
        gateway_support::signal(gateway.id(), nix::sys::signal::Signal::SIGHUP);
        let names = eventually("SIGHUP to bring the rules hiding add", PATIENCE, || {
            let names = listed(gateway.url())?;
            if names.iter().any(|n| n == "echo") && !names.iter().any(|n| n == "add") {
                Ok(names)
            } else {
                Err(format!("{names:?}\ngateway stderr:\n{}", gateway.stderr()))
            }
        });
        assert!(names.iter().any(|n| n == "fail"), "{names:?}");
    }

    // A reload may not take the policy away.
    dir.write_config(&stdio_upstream("a", ""));
    eventually("removing the policy to be refused", PATIENCE, || {
        let stderr = gateway.stderr();
        if stderr.contains("cannot be removed by a reload") { Ok(()) } else { Err(stderr) }
    });
    let still = listed(gateway.url()).unwrap();
    assert!(!still.iter().any(|n| n == "add"), "the rules in force stay: {still:?}");
}

/// Policy rules that allow everything but the tool `tool`.
fn forbid(tool: &str) -> String {
    format!(
        "default = \"allow\"\n[[rule]]\nid = \"no-{tool}\"\neffect = \"forbid\"\nwhen = 'item.kind == \"tool\" && item.name == \"{tool}\"'\n"
    )
}

/// `mcpkit listen --tools --url URL [extra]`, its stdout lines sent on the channel; killed on
/// drop.
struct Listener {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Listener {
    fn start(url: &str, extra: &[&str]) -> Listener {
        let mut command = support::command(&["listen", "--tools", "--url", url]);
        command.args(extra).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Listener { child, lines }
    }

    /// A modern and a legacy listener, each subscribed (modern: acknowledged; legacy: the same
    /// line, printed once the session is up).
    fn both_eras(url: &str) -> [(Listener, &'static str); 2] {
        let listeners = [
            (Listener::start(url, &[]), "modern"),
            (Listener::start(url, &["--protocol-version", "2025-11-25"]), "legacy"),
        ];
        for (listener, era) in &listeners {
            let first = listener.next("acknowledgement");
            assert_eq!(first["acknowledged"]["toolsListChanged"], true, "{era}: {first}");
        }
        listeners
    }

    /// The next line, within `PATIENCE`.
    fn next(&self, what: &str) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no {what} from mcpkit listen within {} s: {e}", PATIENCE.as_secs()));
        json(&line)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn listeners_of_both_eras_hear_of_the_new_tools() {
    let dir = Dir::new("listen");
    let a = stdio_upstream("a", "");
    let config = dir.write_config(&a);
    let gateway = gateway_support::gateway_http(&config);
    let listeners = Listener::both_eras(gateway.url());

    dir.write_config(&[a, stdio_upstream("c", "naming = \"always\"")].concat());
    for (listener, era) in &listeners {
        let changed = listener.next("list change");
        assert_eq!(changed["method"], "notifications/tools/list_changed", "{era}: {changed}");
    }
    until_c_is_listed(&gateway);
}

#[test]
fn listeners_of_both_eras_hear_that_the_policy_changed() {
    let dir = Dir::new("listen-policy");
    let rules = dir.path().join("policy.toml");
    std::fs::write(&rules, forbid("fail")).unwrap();
    let config =
        dir.write_config(&format!("[gateway]\npolicy_file = \"policy.toml\"\n{}", stdio_upstream("a", "")));
    let gateway = gateway_support::gateway_http(&config);
    let listeners = Listener::both_eras(gateway.url());

    // Only the rules change (the configuration file is untouched): what each caller may see
    // has changed, so every listener is told to list again.
    std::fs::write(&rules, forbid("echo")).unwrap();
    for (listener, era) in &listeners {
        let changed = listener.next("list change after the rules changed");
        assert_eq!(changed["method"], "notifications/tools/list_changed", "{era}: {changed}");
    }
    let names = listed(gateway.url()).unwrap();
    assert!(names.iter().any(|n| n == "fail") && !names.iter().any(|n| n == "echo"), "{names:?}");
}
