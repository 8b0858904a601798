//! The top level of a file: the `gateway` table, the `inputs`, and the server tables
//! (`servers`, `mcpServers`); and [`Fields`], the typed reader of one table.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::expand::{Ask, Expander, Input};
use super::node::Node;
use super::{ConfigError, Format, GatewayConfig, Location, Lookup, Naming, Settings, upstream};

/// Where the text came from.
pub(crate) struct Source<'a> {
    /// The file's name in messages.
    pub(crate) file: String,
    /// The file's directory, when there is one.
    pub(crate) base_dir: Option<&'a Path>,
}

/// The top-level keys of the gateway's own TOML.
const TOML_TOP_LEVEL: [&str; 4] = ["gateway", "servers", "mcpServers", "inputs"];
/// The keys of the `gateway` table.
const GATEWAY_KEYS: [&str; 10] = [
    "naming",
    "separator",
    "list_timeout_ms",
    "session_key_file",
    "approve_destructive",
    "approve_tools",
    "approval_exempt",
    "rate_limit_per_minute",
    "rate_limit_burst",
    "policy_file",
];

/// Reads a whole configuration.
pub(crate) fn read(
    text: &str,
    format: Format,
    source: &Source<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<GatewayConfig, ConfigError> {
    let file = source.file.as_str();
    let root = parse_root(text, format, file)?;
    let top = Fields::new(file, None, "", &root, "the top level")?;
    if format == Format::Toml {
        top.deny_unknown(&TOML_TOP_LEVEL)?;
    }
    let settings = match top.get("gateway")? {
        Some(node) => read_settings(&Fields::new(file, None, "gateway.", node, "gateway")?, source.base_dir)?,
        None => Settings::default(),
    };
    let inputs = read_inputs(&top)?;
    let expander = Expander::new(file, env, &inputs, source.base_dir);

    // Every entry of `servers` then `mcpServers`, with names checked across both.
    let mut entries: Vec<(&str, &str, &Node)> = Vec::new();
    for section in ["servers", "mcpServers"] {
        let Some(node) = top.get(section)? else { continue };
        let Node::Obj(members) = node else {
            return Err(
                top.invalid(section, format!("expected a table/object of servers, found {}", node.kind()))
            );
        };
        for (name, entry) in members {
            check_name(file, name)?;
            if let Some((_, first, _)) = entries.iter().find(|(n, _, _)| *n == name) {
                let message = if *first == section {
                    format!("defined twice in `{section}`")
                } else {
                    format!("defined in both `{first}` and `{section}`")
                };
                return Err(invalid(file, Some(name), None, message));
            }
            entries.push((name, section, entry));
        }
    }

    let mut upstreams = Vec::new();
    for (name, _, node) in entries {
        let fields = Fields::new(file, Some(name), "", node, "a server entry")?;
        if let Some(upstream) = upstream::read(&fields, &expander, source.base_dir)? {
            upstreams.push(upstream);
        }
    }
    Ok(GatewayConfig { settings, upstreams })
}

/// Reads the server `name` alone (a malformed neighbour does not matter), expanding its
/// `${input:…}` with `ask` ([`Expander::asking`]).
pub(crate) fn read_server(
    text: &str,
    format: Format,
    source: &Source<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    ask: Ask<'_>,
) -> Result<Lookup, ConfigError> {
    let file = source.file.as_str();
    let root = parse_root(text, format, file)?;
    let top = Fields::new(file, None, "", &root, "the top level")?;
    let mut names = Vec::new();
    let mut found = None;
    for section in ["servers", "mcpServers"] {
        let Some(node) = top.get(section)? else { continue };
        let Node::Obj(members) = node else {
            return Err(
                top.invalid(section, format!("expected a table/object of servers, found {}", node.kind()))
            );
        };
        for (key, entry) in members {
            if key == name && found.is_none() {
                found = Some(entry);
            }
            names.push(key.clone());
        }
    }
    let Some(node) = found else { return Ok(Lookup::Missing { names }) };
    let fields = Fields::new(file, Some(name), "", node, "a server entry")?;
    if fields.bool("disabled")? == Some(true) {
        return Ok(Lookup::Disabled);
    }
    let inputs = read_inputs(&top)?;
    let expander = Expander::new(file, env, &inputs, source.base_dir).asking(ask);
    match upstream::read(&fields, &expander, source.base_dir)? {
        Some(upstream) => Ok(Lookup::Found(Box::new(upstream))),
        None => Ok(Lookup::Disabled),
    }
}

/// The document tree of `text`, or the syntax error.
fn parse_root(text: &str, format: Format, file: &str) -> Result<Node, ConfigError> {
    let syntax = |message: String| ConfigError::Syntax { file: file.to_owned(), format, message };
    match format {
        Format::Toml => super::node::from_toml(text).map_err(|e| syntax(e.to_string().trim_end().to_owned())),
        Format::Json => serde_json::from_str(text).map_err(|e| syntax(e.to_string())),
    }
}

/// An upstream's name: non-empty, `[A-Za-z0-9_-]{1,64}`.
fn check_name(file: &str, name: &str) -> Result<(), ConfigError> {
    let message = if name.is_empty() {
        "the name is empty"
    } else if name.len() > 64 {
        "the name is longer than 64 characters"
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        "the name may only hold ASCII letters, digits, `_` and `-`"
    } else {
        return Ok(());
    };
    Err(invalid(file, Some(name), None, message.to_owned()))
}

fn read_settings(f: &Fields<'_>, base_dir: Option<&Path>) -> Result<Settings, ConfigError> {
    f.deny_unknown(&GATEWAY_KEYS)?;
    let mut settings = Settings::default();
    if let Some(naming) = f.naming("naming")? {
        settings.naming = naming;
    }
    if let Some(separator) = f.string("separator")? {
        if separator.is_empty() {
            return Err(f.invalid("separator", "must not be empty".to_owned()));
        }
        settings.separator = separator.to_owned();
    }
    if let Some(timeout) = f.millis("list_timeout_ms")? {
        settings.list_timeout = timeout;
    }
    if let Some(file) = f.string("session_key_file")? {
        if file.is_empty() {
            return Err(f.invalid("session_key_file", "must not be empty".to_owned()));
        }
        let path = std::path::Path::new(file);
        settings.session_key_file = Some(if path.is_relative() {
            base_dir.map_or_else(|| path.to_path_buf(), |d| d.join(path))
        } else {
            path.to_path_buf()
        });
    }
    if let Some(destructive) = f.bool("approve_destructive")? {
        settings.approvals.destructive = destructive;
    }
    for tool in f.string_array("approve_tools")? {
        settings.approvals.tools.insert(tool.to_owned());
    }
    for subject in f.string_array("approval_exempt")? {
        settings.approvals.exempt.insert(subject.to_owned());
    }
    if let Some(file) = f.string("policy_file")? {
        if file.is_empty() {
            return Err(f.invalid("policy_file", "must not be empty".to_owned()));
        }
        let path = std::path::Path::new(file);
        settings.policy_file = Some(if path.is_relative() {
            base_dir.map_or_else(|| path.to_path_buf(), |d| d.join(path))
        } else {
            path.to_path_buf()
        });
    }
    let per_minute = f.uint("rate_limit_per_minute")?;
    let burst = f.uint("rate_limit_burst")?;
    match (per_minute, burst) {
        (Some(0), _) => return Err(f.invalid("rate_limit_per_minute", "must be at least 1".to_owned())),
        (_, Some(0)) => return Err(f.invalid("rate_limit_burst", "must be at least 1".to_owned())),
        (None, Some(_)) => {
            return Err(f.invalid("rate_limit_burst", "needs rate_limit_per_minute".to_owned()));
        }
        (Some(n), burst) => {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            let limit = mcp_server::RateLimit::new(n, std::time::Duration::from_secs(60));
            settings.rate_limit =
                Some(burst.map_or(limit, |b| limit.with_burst(u32::try_from(b).unwrap_or(u32::MAX))));
        }
        (None, None) => {}
    }
    Ok(settings)
}

/// VS Code's `inputs`, by id.
fn read_inputs(top: &Fields<'_>) -> Result<BTreeMap<String, Input>, ConfigError> {
    let mut inputs = BTreeMap::new();
    let Some(node) = top.get("inputs")? else { return Ok(inputs) };
    let Node::Arr(items) = node else {
        return Err(top.invalid("inputs", format!("expected an array, found {}", node.kind())));
    };
    for (i, item) in items.iter().enumerate() {
        let path = format!("inputs[{i}].");
        let f = Fields::new(top.file, None, &path, item, "an input")?;
        let Some(id) = f.string("id")? else {
            return Err(f.invalid("id", "missing: every input needs an \"id\"".to_owned()));
        };
        f.string("type")?;
        let options = match f.get("options")? {
            None => Vec::new(),
            Some(Node::Arr(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Node::Str(s) => Ok(s.clone()),
                    // `{"label": …, "value": …}`: the value is what is substituted.
                    Node::Obj(_) => Fields::new(top.file, None, &path, item, "an option")?
                        .string("value")?
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            f.invalid(&format!("options[{i}]"), "an option needs a \"value\"".to_owned())
                        }),
                    other => Err(f.invalid(
                        &format!("options[{i}]"),
                        format!("expected a string, found {}", other.kind()),
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(f.invalid("options", format!("expected an array, found {}", other.kind())));
            }
        };
        let input = Input {
            id: id.to_owned(),
            description: f.string("description")?.map(str::to_owned),
            password: f.bool("password")?.unwrap_or(false),
            default: f.string("default")?.map(str::to_owned),
            options,
        };
        inputs.insert(id.to_owned(), input);
    }
    Ok(inputs)
}

pub(crate) fn invalid(
    file: &str,
    upstream: Option<&str>,
    field: Option<String>,
    message: String,
) -> ConfigError {
    let at = Location { file: file.to_owned(), upstream: upstream.map(str::to_owned), field };
    ConfigError::Invalid { at, message }
}

/// The members of one table, read with their types checked; errors name the file, the upstream
/// and the field.
pub(crate) struct Fields<'a> {
    pub(crate) file: &'a str,
    pub(crate) upstream: Option<&'a str>,
    /// Prepended to field names in messages (`gateway.`, `inputs[0].`).
    path: &'a str,
    members: &'a [(String, Node)],
}

impl<'a> Fields<'a> {
    pub(crate) fn new(
        file: &'a str,
        upstream: Option<&'a str>,
        path: &'a str,
        node: &'a Node,
        what: &str,
    ) -> Result<Self, ConfigError> {
        match node {
            Node::Obj(members) => Ok(Fields { file, upstream, path, members }),
            other => {
                let field = path.strip_suffix('.').filter(|p| !p.is_empty()).map(str::to_owned);
                let message = format!("{what} must be a table/object, found {}", other.kind());
                Err(invalid(file, upstream, field, message))
            }
        }
    }

    /// The location of `field` in this table.
    pub(crate) fn at(&self, field: &str) -> Location {
        Location {
            file: self.file.to_owned(),
            upstream: self.upstream.map(str::to_owned),
            field: Some(format!("{}{field}", self.path)),
        }
    }

    pub(crate) fn invalid(&self, field: &str, message: String) -> ConfigError {
        ConfigError::Invalid { at: self.at(field), message }
    }

    fn wrong_type(&self, field: &str, expected: &str, found: &Node) -> ConfigError {
        self.invalid(field, format!("expected {expected}, found {}", found.kind()))
    }

    /// Refuses any member not in `known`.
    pub(crate) fn deny_unknown(&self, known: &[&str]) -> Result<(), ConfigError> {
        match self.members.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            Some((key, _)) => Err(self.invalid(key, format!("unknown key (known: {})", known.join(", ")))),
            None => Ok(()),
        }
    }

    /// A member; `null` counts as absent; a member given twice is an error.
    pub(crate) fn get(&self, key: &str) -> Result<Option<&'a Node>, ConfigError> {
        let mut found = self.members.iter().filter(|(k, _)| k == key).map(|(_, v)| v);
        let first = found.next();
        if found.next().is_some() {
            return Err(self.invalid(key, "given twice".to_owned()));
        }
        Ok(first.filter(|v| **v != Node::Null))
    }

    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>, ConfigError> {
        match self.get(key)? {
            None => Ok(None),
            Some(Node::Str(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.get(key)? {
            None => Ok(None),
            Some(Node::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong_type(key, "a boolean", other)),
        }
    }

    pub(crate) fn uint(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key)? {
            None => Ok(None),
            Some(Node::Int(n)) => u64::try_from(*n)
                .map(Some)
                .map_err(|_| self.invalid(key, format!("expected a non-negative integer, found {n}"))),
            Some(other) => Err(self.wrong_type(key, "a non-negative integer", other)),
        }
    }

    /// Milliseconds, not zero.
    pub(crate) fn millis(&self, key: &str) -> Result<Option<Duration>, ConfigError> {
        match self.uint(key)? {
            Some(0) => Err(self.invalid(key, "a timeout must not be zero".to_owned())),
            other => Ok(other.map(Duration::from_millis)),
        }
    }

    pub(crate) fn naming(&self, key: &str) -> Result<Option<Naming>, ConfigError> {
        let Some(value) = self.string(key)? else { return Ok(None) };
        [Naming::Always, Naming::WhenAmbiguous, Naming::Never]
            .into_iter()
            .find(|n| n.as_str() == value)
            .map(Some)
            .ok_or_else(|| {
                self.invalid(key, format!("unknown value {value:?} (always, when-ambiguous, never)"))
            })
    }

    pub(crate) fn string_array(&self, key: &str) -> Result<Vec<&'a str>, ConfigError> {
        match self.get(key)? {
            None => Ok(Vec::new()),
            Some(Node::Arr(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Node::Str(s) => Ok(s.as_str()),
                    other => Err(self.wrong_type(&format!("{key}[{i}]"), "a string", other)),
                })
                .collect(),
            Some(other) => Err(self.wrong_type(key, "an array of strings", other)),
        }
    }

    /// A table of strings, in file order; a key given twice is an error.
    pub(crate) fn string_map(&self, key: &str) -> Result<Vec<(&'a str, &'a str)>, ConfigError> {
        let members = match self.get(key)? {
            None => return Ok(Vec::new()),
            Some(Node::Obj(members)) => members,
            Some(other) => return Err(self.wrong_type(key, "a table/object of strings", other)),
        };
        let mut out: Vec<(&str, &str)> = Vec::with_capacity(members.len());
        for (k, v) in members {
            let field = format!("{key}.{k}");
            if out.iter().any(|(seen, _)| seen == k) {
                return Err(self.invalid(&field, "given twice".to_owned()));
            }
            match v {
                Node::Str(s) => out.push((k, s)),
                other => return Err(self.wrong_type(&field, "a string", other)),
            }
        }
        Ok(out)
    }
}
