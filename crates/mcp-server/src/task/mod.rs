//! Tasks (the tasks extension, `io.modelcontextprotocol/tasks`, SEP-2663) on the server: the
//! tasks this process runs, and where their states are kept.
//!
//! A tool registered with task support (`Tool::with_task_support`) that a client declaring the
//! extension calls becomes a task as soon as its handler would have to wait (or after
//! [`TaskConfig::grace`]): the call is answered with the task's handle, and the handler runs
//! on in the background. What it asks the client from then on becomes the task's
//! `inputRequests`, answered with `tasks/update`; `tasks/cancel` drops it. Its state is kept
//! behind [`TaskStore`] — [`MemoryTaskStore`] by default — written by this process, in order.

mod store;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use mcp_types::extensions::tasks::{TaskResult, TaskStatus};
use mcp_types::{ErrorObject, InputRequest, InputResponse, InputResponses, JsonObject, ResultType};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

pub use store::{MemoryTaskStore, StoreFuture, TaskRecord, TaskStore, TaskStoreError};

/// How tasks are made and kept (`ServerConfig::tasks`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TaskConfig {
    /// How long a task is kept after its creation, its work included: a task still running
    /// then fails (`None`: until the store drops it). Default one hour.
    pub ttl: Option<Duration>,
    /// The polling interval clients are told. Default 500 ms.
    pub poll_interval: Duration,
    /// How long a call that can become a task runs before it does (a call that finishes
    /// sooner is answered at once, without a task). Default zero: it becomes a task the
    /// first time its handler waits on anything but the client.
    pub grace: Duration,
    /// How many tasks the default in-memory store keeps (finished ones make room for new
    /// ones; when all are running, a new call is refused). Default 10 000.
    pub capacity: usize,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            ttl: Some(Duration::from_secs(3600)),
            poll_interval: Duration::from_millis(500),
            grace: Duration::ZERO,
            capacity: 10_000,
        }
    }
}

impl TaskConfig {
    /// Sets [`TaskConfig::ttl`].
    pub fn with_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets [`TaskConfig::poll_interval`].
    pub fn with_poll_interval(mut self, poll_interval: Duration) -> Self {
        self.poll_interval = poll_interval;
        self
    }

    /// Sets [`TaskConfig::grace`].
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets [`TaskConfig::capacity`].
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }
}

/// A task's state changed: who owns it, and the task as `tasks/get` shows it now.
#[derive(Debug)]
pub(crate) struct TaskChange {
    pub(crate) owner: String,
    pub(crate) task: TaskResult,
}

/// How a task's work ended.
pub(crate) enum Outcome {
    Completed(JsonObject),
    Failed(ErrorObject),
    Cancelled,
}

/// What the live tasks share: the store, and where changes are announced.
struct Shared {
    store: Arc<dyn TaskStore>,
    changes: broadcast::Sender<Arc<TaskChange>>,
}

/// The tasks of one server: those this process runs, and the store behind them all.
pub(crate) struct Tasks {
    shared: Arc<Shared>,
    pub(crate) config: TaskConfig,
    /// The tasks running here, by id: their cancellation and their questions.
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// Set once a task was made: from then on `tasks/*` is served even if the tools that
    /// make tasks are gone.
    made: std::sync::atomic::AtomicBool,
}

impl Tasks {
    pub(crate) fn new(config: TaskConfig, store: Option<Arc<dyn TaskStore>>) -> Self {
        let store = store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new(config.capacity)));
        Tasks {
            shared: Arc::new(Shared { store, changes: broadcast::channel(256).0 }),
            config,
            live: Mutex::default(),
            made: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// True once this server made a task.
    pub(crate) fn made_any(&self) -> bool {
        self.made.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Makes a task for `owner`, kept before this returns; `cancel` is the token its work
    /// already watches.
    pub(crate) async fn create(
        self: &Arc<Self>,
        owner: String,
        cancel: CancellationToken,
    ) -> Result<Arc<Live>, TaskStoreError> {
        let now = SystemTime::now();
        let record = TaskRecord {
            id: task_id(),
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            updated_at: now,
            ttl: self.config.ttl,
            poll_interval: Some(self.config.poll_interval),
            input_requests: Default::default(),
            result: None,
            error: None,
        };
        self.shared.store.insert(record.clone()).await?;
        self.made.store(true, std::sync::atomic::Ordering::Relaxed);
        let live = Arc::new(Live {
            id: record.id.clone(),
            cancel,
            shared: self.shared.clone(),
            state: tokio::sync::Mutex::new(LiveState {
                record,
                waiters: HashMap::new(),
                asked: HashSet::new(),
            }),
        });
        self.live.lock().unwrap_or_else(|e| e.into_inner()).insert(live.id.clone(), live.clone());
        Ok(live)
    }

    /// The task `id` if `owner` owns it (another caller's task is as unknown as a missing
    /// one).
    pub(crate) async fn get(&self, id: &str, owner: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        Ok(self.shared.store.get(id).await?.filter(|task| task.owner == owner))
    }

    /// A live task of this process.
    fn running(&self, id: &str) -> Option<Arc<Live>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    /// Delivers answers to the task's outstanding questions (others are ignored); the task
    /// shows them taken before this returns.
    pub(crate) async fn answer(&self, id: &str, responses: InputResponses) {
        if let Some(live) = self.running(id) {
            live.answer(responses).await;
        }
    }

    /// Asks the task's work to stop (nothing when it is not running here).
    pub(crate) fn cancel(&self, id: &str) {
        if let Some(live) = self.running(id) {
            live.cancel.cancel();
        }
    }

    /// Records how the task's work ended and forgets it as live.
    pub(crate) async fn finish(&self, live: &Live, outcome: Outcome) {
        live.finish(outcome).await;
        self.live.lock().unwrap_or_else(|e| e.into_inner()).remove(&live.id);
    }

    /// Every change of every task from now on.
    pub(crate) fn changes(&self) -> broadcast::Receiver<Arc<TaskChange>> {
        self.shared.changes.subscribe()
    }
}

/// A task running in this process.
pub(crate) struct Live {
    pub(crate) id: String,
    pub(crate) cancel: CancellationToken,
    shared: Arc<Shared>,
    /// Its state, locked across the store's write so that writes reach it in order.
    state: tokio::sync::Mutex<LiveState>,
}

struct LiveState {
    record: TaskRecord,
    /// Who waits for the answer to each outstanding question.
    waiters: HashMap<String, oneshot::Sender<InputResponse>>,
    /// Every key this task ever asked under: a key is never used for a second question.
    asked: HashSet<String>,
}

impl Live {
    /// The task as a `CreateTaskResult`.
    pub(crate) async fn created(&self) -> TaskResult {
        self.state.lock().await.record.to_wire(ResultType::Task)
    }

    /// Puts a question to the client (the task turns `input_required` until every
    /// outstanding one is answered). `key` is kept unless this task already used it.
    pub(crate) async fn ask(&self, key: &str, request: InputRequest) -> oneshot::Receiver<InputResponse> {
        let (send, receive) = oneshot::channel();
        let mut state = self.state.lock().await;
        let mut unique = key.to_owned();
        let mut n = 1;
        while state.asked.contains(&unique) {
            n += 1;
            unique = format!("{key}-{n}");
        }
        state.asked.insert(unique.clone());
        state.waiters.insert(unique.clone(), send);
        state.record.input_requests.insert(unique, request);
        state.record.status = TaskStatus::InputRequired;
        self.save(&mut state).await;
        receive
    }

    async fn answer(&self, responses: InputResponses) {
        let mut state = self.state.lock().await;
        let mut taken = false;
        for (key, response) in responses {
            if let Some(waiter) = state.waiters.remove(&key) {
                state.record.input_requests.remove(&key);
                let _ = waiter.send(response);
                taken = true;
            }
        }
        if !taken {
            return;
        }
        if state.record.input_requests.is_empty() && state.record.status == TaskStatus::InputRequired {
            state.record.status = TaskStatus::Working;
        }
        self.save(&mut state).await;
    }

    async fn finish(&self, outcome: Outcome) {
        let mut state = self.state.lock().await;
        let record = &mut state.record;
        record.input_requests.clear();
        match outcome {
            Outcome::Completed(result) => {
                record.status = TaskStatus::Completed;
                record.result = Some(result);
            }
            Outcome::Failed(error) => {
                record.status = TaskStatus::Failed;
                record.status_message = Some(error.message.clone());
                record.error = Some(error);
            }
            Outcome::Cancelled => {
                record.status = TaskStatus::Cancelled;
                record.status_message = Some("cancelled at the client's request".into());
            }
        }
        state.waiters.clear();
        self.save(&mut state).await;
    }

    /// Writes the state to the store and announces it.
    async fn save(&self, state: &mut LiveState) {
        state.record.updated_at = SystemTime::now().max(state.record.updated_at);
        if let Err(e) = self.shared.store.update(state.record.clone()).await {
            tracing::warn!(task = %self.id, error = %e, "a task's state could not be stored");
        }
        if self.shared.changes.receiver_count() > 0 {
            let change = TaskChange {
                owner: state.record.owner.clone(),
                task: state.record.to_wire(ResultType::Complete),
            };
            let _ = self.shared.changes.send(Arc::new(change));
        }
    }
}

/// A new task id: 128 random bits, hex (unguessable: the id is the handle to the task).
fn task_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
