//! Tasks from the shell: `mcpkit call` follows a call the server made a task (its state shown
//! like progress), `--detach` prints the task instead, and `mcpkit task get|wait|cancel` poll,
//! follow and cancel it — against `mcpkit serve` (its `report` tool becomes a task).

mod support;

use support::{BIN, run as mcpkit, serve_http};

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not one JSON document ({e}): {out}"))
}

#[test]
fn call_follows_a_task_to_its_result_and_shows_its_state() {
    let (code, out, err) =
        mcpkit(&["call", "report", "--arg", "seconds=1", "--progress", "--", BIN, "serve", "--stdio"]);
    assert_eq!(code, 0, "{err}");
    let text = json(&out)["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.starts_with("Report after 1 s (task ") && text.ends_with("all went well."), "{text}");
    let id = text.split("(task ").nth(1).unwrap().split(')').next().unwrap();
    assert!(err.contains(&format!("task {id}: working")), "{err}");
    assert!(err.contains(&format!("task {id}: completed")), "{err}");
    assert_eq!(err.matches(&format!("task {id}: working")).count(), 1, "each state once: {err}");
}

#[test]
fn a_detached_task_is_polled_waited_for_and_cancelled_by_id() {
    let server = serve_http(&[]);
    let url = server.url();
    let (code, out, err) = mcpkit(&["call", "report", "--arg", "seconds=30", "--detach", "--url", url]);
    assert_eq!(code, 0, "{err}");
    let created = json(&out);
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    let id = created["taskId"].as_str().unwrap().to_owned();

    let (code, out, err) = mcpkit(&["task", "get", &id, "--url", url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["status"], "working");

    let (code, out, err) = mcpkit(&["task", "cancel", &id, "--url", url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["taskId"], id.as_str());
    let mut status = String::new();
    for _ in 0..50 {
        let (_, out, _) = mcpkit(&["task", "get", &id, "--url", url]);
        status = json(&out)["status"].as_str().unwrap().to_owned();
        if status == "cancelled" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(status, "cancelled");
    let (code, _, _) = mcpkit(&["task", "get", &id, "--url", url]);
    assert_eq!(code, 4, "a cancelled task is no success");

    let (code, out, err) = mcpkit(&["call", "report", "--arg", "seconds=1", "--detach", "--url", url]);
    assert_eq!(code, 0, "{err}");
    let id = json(&out)["taskId"].as_str().unwrap().to_owned();
    let (code, out, err) = mcpkit(&["task", "wait", &id, "--url", url]);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["content"][0]["text"].as_str().unwrap().contains(&format!("(task {id})")), "{out}");

    let (code, _, err) = mcpkit(&["task", "get", "no-such-task", "--url", url]);
    assert_eq!(code, 5, "an unknown task is not found: {err}");
    assert!(err.contains("no-such-task"), "{err}");
}

#[test]
fn a_call_that_finishes_at_once_is_printed_even_with_detach() {
    let (code, out, err) =
        mcpkit(&["call", "echo", "--arg", "text=hi", "--detach", "--", BIN, "serve", "--stdio"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["content"][0]["text"], "hi");
}
