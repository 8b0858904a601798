//! The configuration file as a tree that keeps its members in file order (and keeps duplicate JSON
//! members, so they can be reported): both TOML and JSON are read into it, and one reader builds
//! the [`GatewayConfig`](super::GatewayConfig) from it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One value of the file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    /// A TOML date/time (no field takes one).
    Datetime,
    Str(String),
    Arr(Vec<Node>),
    /// Members in file order; a JSON object may name a member twice.
    Obj(Vec<(String, Node)>),
}

impl Node {
    /// What the value is, for "expected X, found Y" messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a number",
            Node::Datetime => "a date/time",
            Node::Str(_) => "a string",
            Node::Arr(_) => "an array",
            Node::Obj(_) => "a table/object",
        }
    }
}

/// Parses TOML, keeping each table's keys in file order (the order of their spans: `toml`'s own
/// tables are sorted by key).
pub(crate) fn from_toml(text: &str) -> Result<Node, toml::de::Error> {
    let root = toml::de::DeTable::parse(text)?;
    Ok(from_toml_table(root.get_ref()))
}

fn from_toml_table(table: &toml::de::DeTable<'_>) -> Node {
    let mut members: Vec<_> = table.iter().collect();
    members.sort_by_key(|(key, _)| key.span().start);
    Node::Obj(
        members.into_iter().map(|(k, v)| (k.get_ref().to_string(), from_toml_value(v.get_ref()))).collect(),
    )
}

fn from_toml_value(value: &toml::de::DeValue<'_>) -> Node {
    use toml::de::DeValue;
    match value {
        DeValue::String(s) => Node::Str(s.to_string()),
        // Out of i128's range: a number no field accepts.
        DeValue::Integer(n) => {
            i128::from_str_radix(n.as_str(), n.radix()).map_or(Node::Float(f64::MAX), Node::Int)
        }
        DeValue::Float(x) => Node::Float(x.as_str().parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => Node::Bool(*b),
        DeValue::Datetime(_) => Node::Datetime,
        DeValue::Array(items) => Node::Arr(items.iter().map(|v| from_toml_value(v.get_ref())).collect()),
        DeValue::Table(table) => from_toml_table(table),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a configuration value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            members.push((key, value));
        }
        Ok(Node::Obj(members))
    }
}
