//! A policy whose rules are replaced while it serves: a gateway or server re-reading its rules
//! file (on SIGHUP, or when the file changes) without restarting and without dropping a
//! connection.

use std::sync::Arc;

use arc_swap::ArcSwap;
use mcp_server::policy::{Decision, NamedLimit, Policy, Question};

use crate::RulePolicy;

/// A [`RulePolicy`] that can be replaced while it serves ([`Reloadable::replace`]). Each
/// decision uses the rules in force when it is made: the rules are swapped atomically, with
/// no lock on the request path, and a decision already under way finishes with the rules it
/// began with.
#[derive(Debug)]
pub struct Reloadable {
    current: ArcSwap<RulePolicy>,
}

impl Reloadable {
    /// Serves `rules` until they are replaced.
    pub fn new(rules: RulePolicy) -> Self {
        Reloadable { current: ArcSwap::from_pointee(rules) }
    }

    /// Serves `rules` from now on, and returns the rules they replace.
    pub fn replace(&self, rules: RulePolicy) -> Arc<RulePolicy> {
        self.current.swap(Arc::new(rules))
    }

    /// The rules in force.
    pub fn rules(&self) -> Arc<RulePolicy> {
        self.current.load_full()
    }
}

impl Policy for Reloadable {
    fn decide(&self, question: &Question<'_>) -> Decision {
        self.current.load().decide(question)
    }

    fn needs_approval(&self, question: &Question<'_>) -> bool {
        self.current.load().needs_approval(question)
    }

    fn rate_limits(&self, question: &Question<'_>) -> Vec<NamedLimit> {
        self.current.load().rate_limits(question)
    }
}

#[cfg(test)]
mod tests {
    use mcp_server::Principal;
    use mcp_server::policy::Item;
    use mcp_types::Tool;

    use super::*;

    #[test]
    fn decisions_follow_the_rules_in_force() {
        let forbid_echo = "default = \"allow\"\n[[rule]]\nid = \"no-echo\"\neffect = \"forbid\"\nwhen = 'item.name == \"echo\"'\n";
        let policy = Reloadable::new(forbid_echo.parse().unwrap());
        let echo = Tool::new("echo", Default::default());
        let caller = Principal::new(None, Some("ann".into()), None);
        let ask = |policy: &Reloadable| policy.decide(&Question::new(Some(&caller), Item::Tool(&echo), None));
        assert_eq!(ask(&policy), Decision::Deny(vec!["no-echo".into()]));

        let replaced = policy.replace("default = \"allow\"\n".parse().unwrap());
        assert_eq!(replaced.len(), 1, "the rules replaced are returned");
        assert_eq!(ask(&policy), Decision::Allow);
        assert!(policy.rules().is_empty());

        let approve = "default = \"allow\"\n[[rule]]\nid = \"ask\"\neffect = \"approve\"\nwhen = 'item.name == \"echo\"'\n";
        policy.replace(approve.parse().unwrap());
        assert!(policy.needs_approval(&Question::new(Some(&caller), Item::Tool(&echo), None)));
    }
}
