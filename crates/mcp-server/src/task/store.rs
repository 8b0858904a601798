//! Where tasks' states are kept: the [`TaskStore`] trait and the in-memory store.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use mcp_types::extensions::tasks::{TaskResult, TaskStatus};
use mcp_types::{ErrorObject, InputRequests, JsonObject, ResultType};

/// A boxed future a [`TaskStore`] returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One task's state, as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task's identifier (128 random bits, hex).
    pub id: String,
    /// Who made it (a digest of the authenticated caller, or of "anonymous"): only the same
    /// caller can see, answer or cancel it.
    pub owner: String,
    /// Its status.
    pub status: TaskStatus,
    /// A human-readable description of the status.
    pub status_message: Option<String>,
    /// When it was made.
    pub created_at: SystemTime,
    /// When it last changed.
    pub updated_at: SystemTime,
    /// How long after its creation it is kept (`None`: until the store drops it).
    pub ttl: Option<Duration>,
    /// How often a client should poll it.
    pub poll_interval: Option<Duration>,
    /// The questions it waits on (`input_required`), by key.
    pub input_requests: InputRequests,
    /// The result it completed with (`completed`).
    pub result: Option<JsonObject>,
    /// The JSON-RPC error it failed with (`failed`).
    pub error: Option<ErrorObject>,
}

impl TaskRecord {
    /// True once the task's lifetime is over at `now`.
    pub fn expired(&self, now: SystemTime) -> bool {
        self.ttl.is_some_and(|ttl| self.created_at + ttl <= now)
    }

    /// The task as the wire shows it: a `CreateTaskResult` (`ResultType::Task`, no payload)
    /// or a `GetTaskResult` (`ResultType::Complete`, with the payload of its status).
    pub fn to_wire(&self, result_type: ResultType) -> TaskResult {
        let detailed = result_type != ResultType::Task;
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        TaskResult {
            result_type: Some(result_type),
            task_id: self.id.clone(),
            status: self.status.clone(),
            status_message: self.status_message.clone(),
            created_at: mcp_types::time::rfc3339_millis(self.created_at),
            last_updated_at: mcp_types::time::rfc3339_millis(self.updated_at),
            ttl_ms: self.ttl.map(millis),
            poll_interval_ms: self.poll_interval.map(|d| millis(d).max(1)),
            input_requests: (detailed && self.status == TaskStatus::InputRequired)
                .then(|| self.input_requests.clone()),
            result: self.result.clone().filter(|_| detailed && self.status == TaskStatus::Completed),
            error: self.error.clone().filter(|_| detailed && self.status == TaskStatus::Failed),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Why a store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many live tasks as it may.
    #[error("too many tasks are running; try again later")]
    Full,
    /// The store itself failed (a shared store's backend, say).
    #[error("the task store failed: {0}")]
    Failed(String),
}

/// Where tasks' states are kept. A task's state is written by the server that runs it — one
/// writer per task, its writes in order — and read by whichever serves `tasks/get`; the
/// in-memory [`MemoryTaskStore`] serves one process, and a shared store (keyed by task id)
/// lets replicas answer for each other's tasks.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task. The server answers with the task only once this has returned `Ok`:
    /// from then on, `get` must find it.
    fn insert(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>>;

    /// The task with this id, unless it is unknown or expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Replaces a task's state with a newer one.
    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>>;
}

/// Shards of the in-memory store: a task's shard comes from its id (random), so requests for
/// different tasks rarely wait on one another.
const SHARDS: usize = 16;

fn shard_of(id: &str) -> usize {
    id.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b))) % SHARDS
}

/// Tasks kept in this process: bounded (at most `capacity` tasks, finished ones making room
/// for new ones first) and expiring (a task is dropped once its `ttl` has passed).
pub struct MemoryTaskStore {
    shards: [Mutex<HashMap<String, TaskRecord>>; SHARDS],
    capacity_per_shard: usize,
}

impl MemoryTaskStore {
    /// A store for at most `capacity` tasks (at least one per shard).
    pub fn new(capacity: usize) -> Self {
        MemoryTaskStore {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            capacity_per_shard: capacity.div_ceil(SHARDS).max(1),
        }
    }

    fn shard(&self, id: &str) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.shards[shard_of(id)].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many tasks it holds (expired ones not yet dropped included).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len()).sum()
    }

    /// True when it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore").field("tasks", &self.len()).finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn insert(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        let mut shard = self.shard(&record.id);
        let outcome = (|| {
            if shard.len() >= self.capacity_per_shard {
                let now = SystemTime::now();
                shard.retain(|_, task| !task.expired(now));
            }
            if shard.len() >= self.capacity_per_shard {
                // The finished task that changed longest ago makes room; a running one never.
                let oldest = shard
                    .values()
                    .filter(|task| task.status.is_terminal())
                    .min_by_key(|task| task.updated_at)
                    .map(|task| task.id.clone());
                match oldest {
                    Some(id) => {
                        shard.remove(&id);
                    }
                    None => return Err(TaskStoreError::Full),
                }
            }
            shard.insert(record.id.clone(), record);
            Ok(())
        })();
        drop(shard);
        Box::pin(std::future::ready(outcome))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let mut shard = self.shard(id);
        let found = match shard.get(id) {
            Some(task) if task.expired(SystemTime::now()) => {
                shard.remove(id);
                None
            }
            found => found.cloned(),
        };
        drop(shard);
        Box::pin(std::future::ready(Ok(found)))
    }

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        let mut shard = self.shard(&record.id);
        // A task dropped meanwhile (expired, or evicted once finished) stays dropped.
        if let Some(slot) = shard.get_mut(&record.id) {
            *slot = record;
        }
        drop(shard);
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, status: TaskStatus, ttl: Option<Duration>) -> TaskRecord {
        let now = SystemTime::now();
        TaskRecord {
            id: id.into(),
            owner: "o".into(),
            status,
            status_message: None,
            created_at: now,
            updated_at: now,
            ttl,
            poll_interval: Some(Duration::from_millis(500)),
            input_requests: InputRequests::new(),
            result: None,
            error: None,
        }
    }

    /// The memory store's futures are ready at once: one poll reads them.
    fn block<T>(mut f: StoreFuture<'_, T>) -> T {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("the memory store never waits"),
        }
    }

    #[test]
    fn bounded_finished_tasks_make_room_running_ones_never() {
        let store = MemoryTaskStore::new(SHARDS); // one per shard
        // Two ids in the same shard: find a second id that hashes like the first.
        let first = "a".to_owned();
        let same = (0..).map(|i| format!("b{i}")).find(|id| shard_of(id) == shard_of(&first)).unwrap();
        block(store.insert(record(&first, TaskStatus::Working, None))).unwrap();
        assert_eq!(block(store.insert(record(&same, TaskStatus::Working, None))), Err(TaskStoreError::Full));
        let mut done = record(&first, TaskStatus::Completed, None);
        done.result = Some(JsonObject::new());
        block(store.update(done)).unwrap();
        block(store.insert(record(&same, TaskStatus::Working, None))).unwrap();
        assert!(block(store.get(&first)).unwrap().is_none(), "the finished task made room");
        assert!(block(store.get(&same)).unwrap().is_some());
    }

    #[test]
    fn expired_tasks_are_gone_and_updates_do_not_revive_them() {
        let store = MemoryTaskStore::new(100);
        let mut old = record("old", TaskStatus::Working, Some(Duration::from_millis(1)));
        old.created_at -= Duration::from_secs(1);
        block(store.insert(old.clone())).unwrap();
        assert!(block(store.get("old")).unwrap().is_none());
        block(store.update(old)).unwrap();
        assert!(store.is_empty());
    }

    #[test]
    fn the_wire_shows_the_payload_of_the_status_only() {
        let mut task = record("t", TaskStatus::Completed, Some(Duration::from_millis(60_000)));
        task.result = Some(serde_json::from_str(r#"{"content":[]}"#).unwrap());
        let created = serde_json::to_value(task.to_wire(ResultType::Task)).unwrap();
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["ttlMs"], 60_000);
        assert!(created.get("result").is_none());
        let got = serde_json::to_value(task.to_wire(ResultType::Complete)).unwrap();
        assert_eq!(got["result"]["content"], serde_json::json!([]));
        assert!(got.get("error").is_none() && got.get("inputRequests").is_none());
        task.ttl = None;
        assert!(serde_json::to_value(task.to_wire(ResultType::Complete)).unwrap()["ttlMs"].is_null());
    }
}
