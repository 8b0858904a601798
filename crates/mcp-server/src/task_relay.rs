//! Tasks another server runs, answered for by this one: a gateway passes an upstream's task
//! to its own caller under an id of this server's making, and finds the upstream and its id
//! again in that id — no table of tasks, so any replica holding the same [`StateKey`] serves
//! any replica's tasks.
//!
//! The id is `r1.{route}.{task}.{tag}`: the route (which server runs the task, as the relay
//! names it) and that server's own task id, each base64url, and a tag — HMAC-SHA256 under the
//! server's key, truncated to 128 bits — over both and the caller's identity. Another caller's
//! id, an altered one, or one made under another key is as unknown as a missing task.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac;
use mcp_types::InputResponses;
use mcp_types::extensions::tasks::TaskResult;
use tokio::sync::mpsc;

use crate::call::Call;
use crate::extract::Rejection;
use crate::handler::BoxFuture;
use crate::request_state::{self, StateKey};

/// The prefix of a relayed task's id (a task of this server's own is 32 hex digits).
const PREFIX: &str = "r1.";
/// The longest relayed id opened (longer ones are unknown without being decoded).
const MAX_ID: usize = 2048;
/// How many bytes of the HMAC the id keeps.
const TAG: usize = 16;

/// A task of another server's, as the relay knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RelayedTask {
    /// Which server runs it, as the relay named it when it passed the task on.
    pub route: String,
    /// That server's id for it.
    pub id: String,
}

/// Answers for tasks another server runs ([`Server::set_task_relay`](crate::Server)): a
/// handler passes such a task to its caller with [`TaskHandle::relay`](crate::TaskHandle), and
/// the caller's `tasks/get`, `tasks/update`, `tasks/cancel` and `subscriptions/listen` for it
/// come here, the id already checked to be that caller's and decoded. Results name the task by
/// the other server's id; the server puts its own id back before answering.
pub trait TaskRelay: Send + Sync + 'static {
    /// `tasks/get`: the task as its server shows it now.
    fn get(&self, call: Call, task: RelayedTask) -> BoxFuture<Result<TaskResult, Rejection>>;

    /// `tasks/update`: passes answers to the task's questions on.
    fn update(
        &self,
        call: Call,
        task: RelayedTask,
        responses: InputResponses,
    ) -> BoxFuture<Result<(), Rejection>>;

    /// `tasks/cancel`: asks the task's server to stop it.
    fn cancel(&self, call: Call, task: RelayedTask) -> BoxFuture<Result<(), Rejection>>;

    /// For `subscriptions/listen`: sends the task's state each time it changes, until it ends
    /// or `changes` is closed (the stream ended). The future is dropped when the stream ends.
    fn watch(&self, call: Call, task: RelayedTask, changes: mpsc::Sender<TaskResult>) -> BoxFuture<()>;
}

fn tag(key: &StateKey, caller: &str, route: &str, id: &str) -> [u8; TAG] {
    let mut mac = request_state::mac(key);
    mac.update(b"mcpkit task relay\0");
    for part in [caller, route, id] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part.as_bytes());
    }
    let full = mac.finalize().into_bytes();
    let mut out = [0u8; TAG];
    out.copy_from_slice(&full[..TAG]);
    out
}

/// The id the caller is given for `task`.
pub(crate) fn seal(key: &StateKey, caller: &str, task: &RelayedTask) -> String {
    let tag = tag(key, caller, &task.route, &task.id);
    format!(
        "{PREFIX}{}.{}.{}",
        URL_SAFE_NO_PAD.encode(task.route.as_bytes()),
        URL_SAFE_NO_PAD.encode(task.id.as_bytes()),
        URL_SAFE_NO_PAD.encode(tag)
    )
}

/// True when `id` has the form of a relayed task's id (whoever made it).
pub(crate) fn is_relayed(id: &str) -> bool {
    id.starts_with(PREFIX)
}

/// The task a relayed id names, if this server made it for this caller.
pub(crate) fn open(key: &StateKey, caller: &str, id: &str) -> Option<RelayedTask> {
    if id.len() > MAX_ID {
        return None;
    }
    let mut parts = id.strip_prefix(PREFIX)?.split('.');
    let (route, task, given) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let decode = |text: &str| URL_SAFE_NO_PAD.decode(text).ok().and_then(|b| String::from_utf8(b).ok());
    let (route, task) = (decode(route)?, decode(task)?);
    let given = URL_SAFE_NO_PAD.decode(given).ok()?;
    let expected = tag(key, caller, &route, &task);
    // Compared in constant time: the tag is what keeps one caller out of another's task.
    let same = given.len() == TAG && given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    same.then_some(RelayedTask { route, id: task })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> RelayedTask {
        RelayedTask { route: "up.stream+1".into(), id: "a.b/c".into() }
    }

    #[test]
    fn an_id_opens_for_its_caller_only() {
        let key = StateKey::from_bytes([7; 32]);
        let id = seal(&key, "alice", &task());
        assert!(is_relayed(&id));
        assert_eq!(open(&key, "alice", &id), Some(task()));
        assert_eq!(open(&key, "bob", &id), None, "another caller's task is unknown");
        assert_eq!(open(&StateKey::from_bytes([8; 32]), "alice", &id), None, "another key's id is unknown");
    }

    #[test]
    fn an_altered_id_is_unknown() {
        let key = StateKey::from_bytes([7; 32]);
        let id = seal(&key, "alice", &task());
        let other = seal(&key, "alice", &RelayedTask { route: "up.stream+1".into(), id: "other".into() });
        // The other task's id part with this one's tag.
        let parts: Vec<&str> = id.split('.').collect();
        let other_parts: Vec<&str> = other.split('.').collect();
        let spliced = format!("r1.{}.{}.{}", parts[1], other_parts[2], parts[3]);
        assert_eq!(open(&key, "alice", &spliced), None);
        assert_eq!(open(&key, "alice", &format!("{id}.x")), None);
        assert_eq!(open(&key, "alice", &id[..id.len() - 2]), None);
        assert_eq!(open(&key, "alice", "r1.!!.!!.!!"), None);
        assert_eq!(open(&key, "alice", &"r1.".repeat(1000)), None);
    }
}
