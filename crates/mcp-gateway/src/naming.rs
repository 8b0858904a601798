//! What each upstream's tools and prompts are called downstream: the prefix policy, the rename
//! map, and the memory that keeps a name once given.
//!
//! The rules, in order, for an item `x` of upstream `u`:
//!
//! 1. `u`'s rename map names it: that name, exactly.
//! 2. Policy `always`: `{prefix}{separator}x`.
//! 3. Policy `never`: `x`; another upstream offering `x` too is a conflict (reported, never
//!    silently dropped: the item that did not get the name is left out and named in the
//!    conflicts).
//! 4. Policy `when-ambiguous`: `x` while no other upstream offers `x`; when several do, an
//!    upstream that already held the bare name (the memory of earlier aggregations) keeps it
//!    and the others are prefixed; when none held it, all are prefixed. So adding an upstream
//!    never renames a tool clients already know.

use std::collections::{BTreeMap, HashMap};

use crate::config::Naming;

/// One upstream's items, as the naming sees them.
#[derive(Debug, Clone)]
pub(crate) struct Offer<'a> {
    /// The upstream's name.
    pub(crate) upstream: &'a str,
    pub(crate) prefix: &'a str,
    pub(crate) policy: Naming,
    pub(crate) rename: &'a BTreeMap<String, String>,
    /// The upstream's own names of its items.
    pub(crate) names: Vec<&'a str>,
}

/// Two items that wanted the same downstream name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    /// What kind of item (`tool`, `prompt`).
    pub kind: &'static str,
    /// The downstream name both wanted.
    pub name: String,
    /// The upstream that got it.
    pub kept: String,
    /// The upstream whose item was left out.
    pub left_out: String,
}

/// The outcome: for each offer (same order), the downstream name of each item (`None`: left
/// out, see the conflicts).
#[derive(Debug, Default)]
pub(crate) struct Named {
    pub(crate) names: Vec<Vec<Option<String>>>,
    pub(crate) conflicts: Vec<Conflict>,
}

/// Bare names given to an upstream by an earlier aggregation: (kind, name) → upstream.
#[derive(Debug, Default, Clone)]
pub(crate) struct Memory(HashMap<String, String>);

impl Memory {
    fn holder(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// Names the items of `offers` (tools, or prompts: `kind` says which, for the conflicts).
pub(crate) fn name(kind: &'static str, offers: &[Offer<'_>], separator: &str, memory: &mut Memory) -> Named {
    // Who offers each bare name (items not renamed and not always-prefixed).
    let mut bare_offers: HashMap<&str, Vec<&str>> = HashMap::new();
    for offer in offers {
        if offer.policy == Naming::Always {
            continue;
        }
        for &item in &offer.names {
            if !offer.rename.contains_key(item) {
                let list = bare_offers.entry(item).or_default();
                if !list.contains(&offer.upstream) {
                    list.push(offer.upstream);
                }
            }
        }
    }
    let prefixed = |offer: &Offer<'_>, item: &str| format!("{}{separator}{item}", offer.prefix);
    let mut wanted: Vec<Vec<String>> = Vec::with_capacity(offers.len());
    for offer in offers {
        let mut names = Vec::with_capacity(offer.names.len());
        for &item in &offer.names {
            let name = if let Some(renamed) = offer.rename.get(item) {
                renamed.clone()
            } else {
                match offer.policy {
                    Naming::Always => prefixed(offer, item),
                    Naming::Never => item.to_owned(),
                    Naming::WhenAmbiguous => {
                        let others = bare_offers.get(item).map_or(0, Vec::len);
                        if others <= 1 {
                            item.to_owned()
                        } else {
                            match memory.holder(item) {
                                Some(holder) if holder == offer.upstream => item.to_owned(),
                                _ => prefixed(offer, item),
                            }
                        }
                    }
                }
            };
            names.push(name);
        }
        wanted.push(names);
    }
    // Give out the names: the first claim wins, except that the remembered holder of a bare
    // name wins over anyone else.
    let mut owner: HashMap<String, (usize, usize)> = HashMap::new();
    let mut named = Named { names: vec![Vec::new(); offers.len()], conflicts: Vec::new() };
    for (u, names) in wanted.iter().enumerate() {
        named.names[u] = vec![None; names.len()];
    }
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (u, names) in wanted.iter().enumerate() {
        for i in 0..names.len() {
            order.push((u, i));
        }
    }
    // Remembered holders first, so they keep their names whatever the order of upstreams.
    order.sort_by_key(|&(u, i)| memory.holder(&wanted[u][i]) != Some(offers[u].upstream));
    for (u, i) in order {
        let name = &wanted[u][i];
        match owner.get(name) {
            Some(&(ou, _)) if ou == u => {
                // The same upstream lists the same name twice: keep the first.
                tracing::warn!(upstream = offers[u].upstream, kind, %name, "listed twice; the second is left out");
            }
            Some(&(ou, _)) => named.conflicts.push(Conflict {
                kind,
                name: name.clone(),
                kept: offers[ou].upstream.to_owned(),
                left_out: offers[u].upstream.to_owned(),
            }),
            None => {
                owner.insert(name.clone(), (u, i));
                named.names[u][i] = Some(name.clone());
            }
        }
    }
    // Remember who holds which bare name (prefixed and renamed names need no memory).
    for (u, names) in named.names.iter().enumerate() {
        for (i, name) in names.iter().enumerate() {
            if let Some(name) = name
                && name == offers[u].names[i]
            {
                memory.0.insert(name.clone(), offers[u].upstream.to_owned());
            }
        }
    }
    named.conflicts.sort_by(|a, b| (&a.name, &a.left_out).cmp(&(&b.name, &b.left_out)));
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer<'a>(
        upstream: &'a str,
        policy: Naming,
        rename: &'a BTreeMap<String, String>,
        names: &[&'a str],
    ) -> Offer<'a> {
        Offer { upstream, prefix: upstream, policy, rename, names: names.to_vec() }
    }

    fn names(named: &Named) -> Vec<Vec<Option<&str>>> {
        named.names.iter().map(|n| n.iter().map(Option::as_deref).collect()).collect()
    }

    #[test]
    fn when_ambiguous_prefixes_only_shared_names() {
        let none = BTreeMap::new();
        let offers = [
            offer("a", Naming::WhenAmbiguous, &none, &["read", "only_a"]),
            offer("b", Naming::WhenAmbiguous, &none, &["read", "only_b"]),
        ];
        let named = name("tool", &offers, "__", &mut Memory::default());
        assert_eq!(names(&named), [[Some("a__read"), Some("only_a")], [Some("b__read"), Some("only_b")]]);
        assert!(named.conflicts.is_empty());
    }

    #[test]
    fn adding_an_upstream_never_renames_a_known_tool() {
        let none = BTreeMap::new();
        let mut memory = Memory::default();
        let first = [offer("b", Naming::WhenAmbiguous, &none, &["read"])];
        assert_eq!(names(&name("tool", &first, "__", &mut memory)), [[Some("read")]]);
        // "a" comes first in the configuration and offers "read" too: "b" keeps it.
        let both = [
            offer("a", Naming::WhenAmbiguous, &none, &["read"]),
            offer("b", Naming::WhenAmbiguous, &none, &["read"]),
        ];
        let named = name("tool", &both, "__", &mut memory);
        assert_eq!(names(&named), [[Some("a__read")], [Some("read")]]);
        // And again: stable.
        let named = name("tool", &both, "__", &mut memory);
        assert_eq!(names(&named), [[Some("a__read")], [Some("read")]]);
    }

    #[test]
    fn never_reports_a_conflict_and_leaves_the_second_out() {
        let none = BTreeMap::new();
        let offers = [
            offer("a", Naming::Never, &none, &["read"]),
            offer("b", Naming::Never, &none, &["read", "write"]),
        ];
        let named = name("tool", &offers, "__", &mut Memory::default());
        assert_eq!(names(&named), [vec![Some("read")], vec![None, Some("write")]]);
        assert_eq!(
            named.conflicts,
            [Conflict { kind: "tool", name: "read".into(), kept: "a".into(), left_out: "b".into() }]
        );
    }

    #[test]
    fn always_and_rename() {
        let rename = BTreeMap::from([("read".to_owned(), "fs_read".to_owned())]);
        let none = BTreeMap::new();
        let offers = [
            offer("a", Naming::Always, &rename, &["read", "write"]),
            offer("b", Naming::Never, &none, &["read"]),
        ];
        let named = name("tool", &offers, ".", &mut Memory::default());
        assert_eq!(names(&named), [vec![Some("fs_read"), Some("a.write")], vec![Some("read")]]);
    }

    #[test]
    fn a_rename_onto_a_taken_name_is_a_conflict() {
        let rename = BTreeMap::from([("x".to_owned(), "read".to_owned())]);
        let none = BTreeMap::new();
        let offers =
            [offer("a", Naming::Never, &none, &["read"]), offer("b", Naming::Never, &rename, &["x"])];
        let named = name("tool", &offers, "__", &mut Memory::default());
        assert_eq!(names(&named), [vec![Some("read")], vec![None]]);
        assert_eq!(named.conflicts.len(), 1);
    }
}
