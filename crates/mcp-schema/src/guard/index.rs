//! One walk over the subschemas of a document: counts them, checks regex lengths, and records
//! what `$ref` resolution needs (resources declared by `$id`, anchors, and which resource each
//! subschema lies in).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{ComplexityError, Limits};

/// Keywords whose value is an object of schemas.
const SCHEMA_MAPS: &[&str] =
    &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
/// Keywords whose value is a schema or an array of schemas.
const SCHEMA_LISTS: &[&str] = &["items", "prefixItems", "allOf", "anyOf", "oneOf"];
/// Keywords whose value is a schema.
const SCHEMA_SINGLES: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "additionalItems",
    "contentSchema",
];

/// Calls `f` on every subschema directly under the schema object `obj`.
pub(super) fn for_each_subschema<'a>(obj: &'a Map<String, Value>, mut f: impl FnMut(&'a Value)) {
    for (keyword, value) in obj {
        let keyword = keyword.as_str();
        if SCHEMA_MAPS.contains(&keyword) {
            if let Value::Object(map) = value {
                // Arrays are not schemas (`dependencies` maps names to arrays of names too).
                map.values().filter(|v| !v.is_array()).for_each(&mut f);
            }
        } else if SCHEMA_LISTS.contains(&keyword) {
            match value {
                Value::Array(items) => items.iter().for_each(&mut f),
                single => f(single),
            }
        } else if SCHEMA_SINGLES.contains(&keyword) {
            f(value);
        }
    }
}

/// The identity of a value inside the borrowed document.
pub(super) fn addr(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

/// What two URIs must share to possibly be the same after resolution and normalization: the
/// last path segment, percent-decoded and lowercased. `Wild` (the segment depends on the base,
/// or is `.`/`..`) may be the same as anything.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Wild,
    Segment(String),
}

impl Key {
    /// The key of a URI reference (its fragment, if any, is ignored).
    pub(super) fn of(uri: &str) -> Key {
        let uri = uri.split(['#', '?']).next().unwrap_or_default();
        // Drop a scheme, so `urn:x` and a relative `x` resolved against `urn:` agree.
        let scheme_end = uri.find(':').filter(|&i| {
            let scheme = &uri[..i];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        let rest = scheme_end.map_or(uri, |i| &uri[i + 1..]);
        let path = match rest.strip_prefix("//") {
            // Authority without a path: normalization may or may not add `/`.
            Some(after) => match after.find('/') {
                Some(i) => &after[i..],
                None => return Key::Wild,
            },
            None => rest,
        };
        if path.is_empty() {
            return Key::Wild; // a query or nothing: the path comes from the base
        }
        let last = path.rsplit('/').next().unwrap_or_default();
        let last = percent_decode(last).to_lowercase();
        if last == "." || last == ".." { Key::Wild } else { Key::Segment(last) }
    }
}

/// Decodes `%XX` escapes; a malformed escape stays as written.
pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A schema resource: the document root, or a subschema declaring `$id` (or draft-4 `id`).
pub(super) struct Resource<'a> {
    pub(super) value: &'a Value,
    /// The resource this one is nested in.
    pub(super) parent: Option<usize>,
    pub(super) key: Key,
}

/// What `$ref` resolution needs to know about a document.
pub(super) struct Index<'a> {
    /// Resource 0 is the document root under its default base URI.
    pub(super) resources: Vec<Resource<'a>>,
    /// Resources by key (wild ones are in `wild` only).
    by_key: HashMap<Key, Vec<usize>>,
    wild: Vec<usize>,
    /// Subschemas declaring an anchor (`$anchor`, `$dynamicAnchor`, or a plain-name fragment in
    /// `$id`), by name.
    pub(super) anchors: HashMap<String, Vec<&'a Value>>,
    /// The innermost resource of each schema object met in the walk, by [`addr`].
    pub(super) home: HashMap<usize, usize>,
}

impl<'a> Index<'a> {
    /// Walks the subschemas of `root`, counting them and checking regex lengths.
    pub(super) fn build(root: &'a Value, limits: &Limits) -> Result<Self, ComplexityError> {
        let mut index = Index {
            resources: Vec::new(),
            by_key: HashMap::new(),
            wild: Vec::new(),
            anchors: HashMap::new(),
            home: HashMap::new(),
        };
        // Without an `$id`, the root's base URI is `json-schema:///`.
        index.add_resource(root, None, Key::of("json-schema:///"));
        let mut count = 0usize;
        let mut stack = vec![(root, 0usize)];
        while let Some((value, parent)) = stack.pop() {
            count += 1;
            if count > limits.max_subschemas {
                return Err(ComplexityError::TooManySubschemas { count, limit: limits.max_subschemas });
            }
            let Value::Object(obj) = value else { continue };
            check_patterns(obj, limits.max_pattern_len)?;
            let home = index.declare(value, obj, parent);
            index.home.insert(addr(value), home);
            for_each_subschema(obj, |child| stack.push((child, home)));
        }
        Ok(index)
    }

    fn add_resource(&mut self, value: &'a Value, parent: Option<usize>, key: Key) -> usize {
        let id = self.resources.len();
        match &key {
            Key::Wild => self.wild.push(id),
            key => self.by_key.entry(key.clone()).or_default().push(id),
        }
        self.resources.push(Resource { value, parent, key });
        id
    }

    /// Records the resources and anchors `obj` declares; returns its innermost resource.
    fn declare(&mut self, value: &'a Value, obj: &'a Map<String, Value>, parent: usize) -> usize {
        let mut home = parent;
        // Both spellings, and the root's `$id` as well as its default base: which applies
        // depends on the draft and on a sibling `$ref`, so keep every possibility.
        for keyword in ["$id", "id"] {
            let Some(Value::String(id)) = obj.get(keyword) else { continue };
            let (uri, fragment) = id.split_once('#').unwrap_or((id, ""));
            if !uri.is_empty() {
                home = self.add_resource(value, Some(home), Key::of(uri));
            }
            if !fragment.is_empty() && !fragment.starts_with('/') {
                self.add_anchor(percent_decode(fragment), value);
            }
        }
        for keyword in ["$anchor", "$dynamicAnchor"] {
            if let Some(Value::String(name)) = obj.get(keyword) {
                self.add_anchor(name.clone(), value);
            }
        }
        home
    }

    fn add_anchor(&mut self, name: String, value: &'a Value) {
        self.anchors.entry(name).or_default().push(value);
    }

    /// Every resource whose URI may be the same as one with key `key`.
    pub(super) fn aliases(&self, key: &Key, out: &mut Vec<usize>) {
        match key {
            Key::Wild => out.extend(0..self.resources.len()),
            key => {
                out.extend(self.by_key.get(key).into_iter().flatten());
                out.extend(&self.wild);
            }
        }
    }

    /// Every resource a fragment-only reference made inside `home` may be resolved against:
    /// the resources enclosing it and any resource that may share a URI with one of them.
    pub(super) fn enclosing(&self, home: usize, out: &mut Vec<usize>) {
        let mut next = Some(home);
        while let Some(id) = next {
            self.aliases(&self.resources[id].key, out);
            out.push(id);
            next = self.resources[id].parent;
        }
    }
}

fn check_patterns(obj: &Map<String, Value>, limit: usize) -> Result<(), ComplexityError> {
    let too_long = |pattern: &str| {
        let len = pattern.chars().count();
        if len > limit { Err(ComplexityError::PatternTooLong { len, limit }) } else { Ok(()) }
    };
    if let Some(Value::String(pattern)) = obj.get("pattern") {
        too_long(pattern)?;
    }
    if let Some(Value::Object(patterns)) = obj.get("patternProperties") {
        patterns.keys().try_for_each(|p| too_long(p))?;
    }
    Ok(())
}
