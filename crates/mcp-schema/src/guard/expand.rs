//! The `$ref` expansion count: memoized over the reference graph, iterative (no recursion, so
//! a long chain of references cannot overflow the stack), stopping once the limit is passed.

use std::collections::HashMap;

use serde_json::Value;

use super::ComplexityError;
use super::index::{Index, Key, addr, for_each_subschema, percent_decode};

/// Keywords whose string value refers to another schema.
const REF_KEYWORDS: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

enum State {
    /// Being expanded: a reference back to it closes a cycle.
    InProgress,
    Done(u64),
}

enum Task<'a> {
    /// A subschema: costs its size.
    Child(&'a Value),
    /// A reference: costs its largest possible target, plus `extra` for the work of finding it.
    Ref { targets: Vec<&'a Value>, extra: u64 },
}

struct Frame<'a> {
    node: &'a Value,
    tasks: Vec<Task<'a>>,
    /// Next task.
    next: usize,
    /// Next target of the current `Ref` task, and the largest target size so far.
    target: usize,
    largest: u64,
    /// Size so far.
    size: u64,
}

/// Fails when the expansion of `root` passes `limit`.
pub(super) fn check(root: &Value, index: &Index<'_>, limit: u64) -> Result<(), ComplexityError> {
    let mut expander = Expander { index, memo: HashMap::new(), stack: Vec::new() };
    expander
        .run(root, limit)
        .map(drop)
        .map_err(|expansions| ComplexityError::RefExpansion { expansions, limit })
}

struct Expander<'i, 'a> {
    index: &'i Index<'a>,
    memo: HashMap<usize, State>,
    stack: Vec<Frame<'a>>,
}

impl<'a> Expander<'_, 'a> {
    /// The size of `root`, or `Err` with the size where counting stopped.
    fn run(&mut self, root: &'a Value, limit: u64) -> Result<u64, u64> {
        if let Some(size) = self.size_or_enter(root) {
            return Ok(size);
        }
        loop {
            let frame = self.stack.last_mut().expect("a frame is on the stack");
            if frame.size > limit {
                return Err(frame.size);
            }
            let Some(task) = frame.tasks.get(frame.next) else {
                let (node, size) = (frame.node, frame.size);
                self.stack.pop();
                self.memo.insert(addr(node), State::Done(size));
                if self.stack.is_empty() {
                    return Ok(size);
                }
                continue;
            };
            let pending = match task {
                Task::Child(child) => *child,
                Task::Ref { targets, extra } => match targets.get(frame.target) {
                    Some(target) => *target,
                    None => {
                        // No target (unresolvable: compiling will fail) still counts one.
                        let cost = frame.largest.max(1).saturating_add(*extra);
                        frame.size = frame.size.saturating_add(cost);
                        (frame.next, frame.target, frame.largest) = (frame.next + 1, 0, 0);
                        continue;
                    }
                },
            };
            let Some(size) = self.size_or_enter(pending) else { continue };
            let frame = self.stack.last_mut().expect("a frame is on the stack");
            match frame.tasks[frame.next] {
                Task::Child(_) => {
                    frame.size = frame.size.saturating_add(size);
                    frame.next += 1;
                }
                Task::Ref { .. } => {
                    frame.largest = frame.largest.max(size);
                    frame.target += 1;
                }
            }
        }
    }

    /// The size of `node` if known now (a leaf, a memoized schema, or a cycle back to a schema
    /// being expanded, which counts 1); otherwise pushes a frame to expand it and returns `None`.
    fn size_or_enter(&mut self, node: &'a Value) -> Option<u64> {
        let Value::Object(obj) = node else { return Some(1) };
        match self.memo.get(&addr(node)) {
            Some(State::Done(size)) => return Some(*size),
            Some(State::InProgress) => return Some(1),
            None => {}
        }
        self.memo.insert(addr(node), State::InProgress);
        let mut tasks = Vec::new();
        for_each_subschema(obj, |child| tasks.push(Task::Child(child)));
        for keyword in REF_KEYWORDS {
            if let Some(Value::String(reference)) = obj.get(*keyword) {
                let recursive = *keyword == "$recursiveRef";
                tasks.push(self.resolve(node, reference, recursive));
            }
        }
        let frame = Frame { node, tasks, next: 0, target: 0, largest: 0, size: 1 };
        self.stack.push(frame);
        None
    }

    /// Every subschema `reference`, made in `node`, may name.
    fn resolve(&self, node: &'a Value, reference: &str, recursive: bool) -> Task<'a> {
        let index = self.index;
        let (uri, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let fragment = percent_decode(fragment);
        let mut targets: Vec<&'a Value> = Vec::new();
        let examined;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            // An anchor: any subschema declaring that name, in whatever resource.
            targets.extend(index.anchors.get(&fragment).into_iter().flatten());
            examined = targets.len();
        } else {
            let mut resources = Vec::new();
            match index.home.get(&addr(node)) {
                // `$recursiveRef` may land on any resource root (`$recursiveAnchor`).
                _ if recursive => index.aliases(&Key::Wild, &mut resources),
                Some(&home) if uri.is_empty() => index.enclosing(home, &mut resources),
                // Reached only through a pointer into a non-schema position: anywhere.
                None if uri.is_empty() => index.aliases(&Key::Wild, &mut resources),
                _ => index.aliases(&Key::of(uri), &mut resources),
            }
            let mut roots: Vec<&'a Value> =
                resources.into_iter().map(|id| index.resources[id].value).collect();
            dedup_by_addr(&mut roots);
            examined = roots.len();
            let tokens = pointer_tokens(&fragment);
            targets.extend(roots.into_iter().filter_map(|root| follow(root, &tokens)));
        }
        dedup_by_addr(&mut targets);
        let extra = u64::try_from(examined.saturating_sub(1)).unwrap_or(u64::MAX);
        Task::Ref { targets, extra }
    }
}

fn dedup_by_addr(values: &mut Vec<&Value>) {
    values.sort_unstable_by_key(|v| addr(v));
    values.dedup_by_key(|v| addr(v));
}

/// The reference tokens of a JSON Pointer (`""` is the whole document).
fn pointer_tokens(pointer: &str) -> Vec<String> {
    pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect()
}

fn follow<'a>(root: &'a Value, tokens: &[String]) -> Option<&'a Value> {
    tokens.iter().try_fold(root, |value, token| match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}
