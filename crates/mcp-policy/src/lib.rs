//! Policies for mcpkit servers and gateways — who may see and use which tools, prompts and
//! resources — as rules written in CEL, the Common Expression Language.
//!
//! [`RulePolicy`] is an [`mcp_server::policy::Policy`]: give it to a server with
//! `ServerBuilder::policy`. It reads a TOML file of rules:
//!
//! ```toml
//! default = "allow"            # what no rule decides: "allow" or "deny" (the default)
//!
//! [[rule]]
//! id = "destructive-needs-admin"
//! effect = "forbid"
//! when = 'item.kind == "tool" && item.annotations.destructiveHint == true && !("admin" in principal.scopes)'
//!
//! [[rule]]
//! id = "no-root"
//! effect = "forbid"
//! when = 'has(context.arguments.path) && context.arguments.path.startsWith("/root")'
//! ```
//!
//! A `forbid` rule that matches denies, whatever else matches; otherwise a `permit` rule that
//! matches allows; otherwise `default` decides. An `approve` rule decides nothing of that: a
//! tool call it matches (and that is allowed) waits for a person's approval first —
//! `when = 'action == "tools/call" && context.arguments.amount > 1000'`, say. A `limit` rule
//! decides nothing either: an allowed use it matches is also held to its `rate` (`"10/minute"`;
//! `second`, `minute`, `hour`, `day`, or a span such as `"100/10s"`, `"5/2m"`), with an
//! optional `burst` (the default: the rate's count), per caller × item — a bucket per rule, so
//! several matching limits each apply:
//!
//! ```toml
//! [[rule]]
//! id = "search-cap"
//! effect = "limit"
//! rate = "30/minute"
//! burst = 5
//! when = 'action == "tools/call" && item.name == "search" && !("bulk" in principal.scopes)'
//! ```
//!
//! A rule whose expression fails to evaluate (a
//! missing member without `has()`, a type mismatch) does not match, and the failure is logged.
//!
//! What an expression sees:
//!
//! - `principal` — `subject` (`"anonymous"` without a token), `authenticated`, `scopes` (a
//!   list), `client_id` and `issuer` (empty strings when absent);
//! - `action` — `"tools/call"`, `"prompts/get"` or `"resources/read"`: the use (a list shows
//!   what the caller may use);
//! - `item` — `kind` (`tool`, `prompt`, `resource`, `template`), `name` (a URI or URI template
//!   for resources), and for a tool its `annotations` (`readOnlyHint`, `destructiveHint`,
//!   `idempotentHint`, `openWorldHint`, `title`: those the server declares), for a listed
//!   resource its `uri`, `mimeType`;
//! - `context` — `arguments`, a use's arguments; absent when deciding what a list shows, so
//!   test `has(context.arguments)` (or a member of it) first.

use std::str::FromStr;

mod reload;
pub use reload::Reloadable;

use std::sync::Arc;
use std::time::Duration;

use cel_interpreter::{Context, Program, Value as Cel};
use mcp_server::policy::{Decision, Item, NamedLimit, Policy, Question};
use mcp_server::{Principal, RateLimit};
use serde::Deserialize;
use serde_json::{Value, json};

/// A rule's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Allows, unless a `forbid` matches.
    Permit,
    /// Denies.
    Forbid,
    /// Neither allows nor denies: an allowed `tools/call` it matches needs a person's approval
    /// before the tool runs (asked as the server's approvals are; a caller the approval
    /// settings exempt is not asked).
    Approve,
    /// Neither allows nor denies: an allowed use it matches is held to the rule's `rate`
    /// (a bucket per rule × caller × item).
    Limit,
}

/// What no rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Default {
    /// Allowed.
    Allow,
    /// Denied (the default).
    #[default]
    Deny,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleText {
    id: String,
    effect: Effect,
    when: String,
    /// A `limit` rule's rate: `"N/second"` (`minute`, `hour`, `day`) or `"N/<span>"`.
    rate: Option<String>,
    /// A `limit` rule's burst (default: the rate's count).
    burst: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileText {
    #[serde(default)]
    default: Default,
    #[serde(default, rename = "rule")]
    rules: Vec<RuleText>,
}

struct Rule {
    id: Arc<str>,
    effect: Effect,
    program: Program,
    /// A `limit` rule's limit.
    limit: Option<RateLimit>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("id", &self.id).field("effect", &self.effect).finish_non_exhaustive()
    }
}

/// A set of CEL rules.
#[derive(Debug)]
pub struct RulePolicy {
    default: Default,
    rules: Vec<Rule>,
}

/// A rules file that does not parse, or a rule that does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

impl FromStr for RulePolicy {
    type Err = PolicyError;

    /// Reads the TOML rules file (see the crate documentation): every rule's expression is
    /// compiled now, so a mistake is reported with its rule before anything is served.
    fn from_str(text: &str) -> Result<Self, PolicyError> {
        let file: FileText =
            toml::from_str(text).map_err(|e| PolicyError(format!("the rules do not parse: {e}")))?;
        let mut seen = std::collections::BTreeSet::new();
        let rules = file
            .rules
            .into_iter()
            .map(|rule| {
                if !seen.insert(rule.id.clone()) {
                    return Err(PolicyError(format!("rule {:?} is defined twice", rule.id)));
                }
                let program = compile(&rule.when)
                    .map_err(|e| PolicyError(format!("rule {:?}: `when` does not compile: {e}", rule.id)))?;
                let limit = match (rule.effect, &rule.rate) {
                    (Effect::Limit, Some(rate)) => {
                        let limit = parse_rate(rate)
                            .map_err(|e| PolicyError(format!("rule {:?}: `rate` {e}", rule.id)))?;
                        Some(match rule.burst {
                            Some(0) => {
                                return Err(PolicyError(format!(
                                    "rule {:?}: `burst` must be at least 1",
                                    rule.id
                                )));
                            }
                            Some(burst) => limit.with_burst(burst),
                            None => limit,
                        })
                    }
                    (Effect::Limit, None) => {
                        return Err(PolicyError(format!(
                            "rule {:?}: a `limit` rule needs a `rate`",
                            rule.id
                        )));
                    }
                    (_, Some(_)) => {
                        return Err(PolicyError(format!(
                            "rule {:?}: only a `limit` rule has a `rate`",
                            rule.id
                        )));
                    }
                    (_, None) if rule.burst.is_some() => {
                        return Err(PolicyError(format!(
                            "rule {:?}: only a `limit` rule has a `burst`",
                            rule.id
                        )));
                    }
                    (_, None) => None,
                };
                Ok(Rule { id: rule.id.into(), effect: rule.effect, program, limit })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RulePolicy { default: file.default, rules })
    }
}

/// A `limit` rule's `rate`: `"N/second"`, `"N/minute"`, `"N/hour"`, `"N/day"`, or `"N/<span>"`
/// with a span of whole seconds, minutes or hours (`"100/10s"`, `"5/2m"`, `"1000/1h"`).
fn parse_rate(text: &str) -> Result<RateLimit, String> {
    let wrong = || format!("{text:?} is not a rate such as \"10/minute\" or \"100/10s\"");
    let (count, per) = text.split_once('/').ok_or_else(wrong)?;
    let count: u32 = count.trim().parse().map_err(|_| wrong())?;
    if count == 0 {
        return Err(format!("{text:?} allows nothing: a rate needs at least 1 request"));
    }
    let per = per.trim();
    let seconds = match per {
        "second" | "s" => 1,
        "minute" | "m" => 60,
        "hour" | "h" => 3600,
        "day" | "d" => 86_400,
        span => {
            let unit = span.chars().last().ok_or_else(wrong)?;
            let n: u64 = span[..span.len() - unit.len_utf8()].parse().map_err(|_| wrong())?;
            let scale = match unit {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                _ => return Err(wrong()),
            };
            if n == 0 {
                return Err(wrong());
            }
            n.checked_mul(scale).ok_or_else(wrong)?
        }
    };
    Ok(RateLimit::new(count, Duration::from_secs(seconds)))
}

/// Compiles a CEL expression. The parser panics on some malformed input instead of returning
/// an error; that panic is caught here and reported as the error it is.
fn compile(expression: &str) -> Result<Program, String> {
    match std::panic::catch_unwind(|| Program::compile(expression)) {
        Ok(compiled) => compiled.map_err(|e| e.to_string()),
        Err(_) => Err(format!("{expression:?} is not a CEL expression")),
    }
}

impl RulePolicy {
    /// How many rules it holds.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether it holds none (then `default` decides everything).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// JSON as a CEL value: numbers as integers when whole, `null`s kept as CEL `null`.
fn principal_of(principal: Option<&Principal>) -> Value {
    json!({
        "subject": principal.and_then(|p| p.subject.as_deref()).unwrap_or("anonymous"),
        "authenticated": principal.is_some(),
        "scopes": principal.map(|p| p.scopes.clone()).unwrap_or_default(),
        "client_id": principal.and_then(|p| p.client_id.as_deref()).unwrap_or_default(),
        "issuer": principal.and_then(|p| p.issuer.as_deref()).unwrap_or_default(),
    })
}

fn item_of(item: &Item<'_>) -> Value {
    match item {
        Item::Tool(tool) => {
            let annotations = tool
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok())
                .unwrap_or_else(|| json!({}));
            json!({ "kind": "tool", "name": tool.name, "annotations": annotations })
        }
        Item::Prompt(prompt) => json!({ "kind": "prompt", "name": prompt.name }),
        Item::Resource { uri, def } => {
            let mut value = json!({ "kind": "resource", "name": uri, "uri": uri });
            if let Some(mime) = def.and_then(|d| d.mime_type.as_deref()) {
                value["mimeType"] = Value::String(mime.to_owned());
            }
            value
        }
        Item::Template(template) => {
            json!({ "kind": "template", "name": template.uri_template, "uri": template.uri_template })
        }
        _ => json!({ "kind": "other", "name": item.name() }),
    }
}

impl RulePolicy {
    /// The variables an expression sees for `question`; the name of one that could not be
    /// built.
    fn context(question: &Question<'_>) -> Result<Context<'static>, String> {
        let mut context = Context::default();
        let context_value = match question.arguments {
            Some(arguments) => json!({ "arguments": arguments }),
            None => json!({}),
        };
        let variables = [
            ("principal", principal_of(question.principal)),
            ("action", Value::String(question.item.action().to_owned())),
            ("item", item_of(&question.item)),
            ("context", context_value),
        ];
        for (name, value) in variables {
            if let Err(e) = context.add_variable(name, value) {
                tracing::warn!("the policy's `{name}` could not be built: {e}");
                return Err(name.to_owned());
            }
        }
        Ok(context)
    }

    /// Whether `rule` matches in `context` (a failure to evaluate does not match).
    fn matches(rule: &Rule, context: &Context<'_>) -> bool {
        match rule.program.execute(context) {
            Ok(Cel::Bool(matched)) => matched,
            Ok(other) => {
                tracing::warn!(rule = %rule.id, "the rule's `when` is not a boolean ({other:?}): it does not match");
                false
            }
            Err(e) => {
                tracing::debug!(rule = %rule.id, "the rule did not evaluate ({e}): it does not match");
                false
            }
        }
    }
}

impl Policy for RulePolicy {
    fn decide(&self, question: &Question<'_>) -> Decision {
        let context = match Self::context(question) {
            Ok(context) => context,
            Err(name) => return Decision::Deny(vec![format!("error: {name}")]),
        };
        let mut permitted = false;
        let mut forbidden = Vec::new();
        for rule in self.rules.iter().filter(|r| matches!(r.effect, Effect::Permit | Effect::Forbid)) {
            if Self::matches(rule, &context) {
                match rule.effect {
                    Effect::Forbid => forbidden.push(rule.id.to_string()),
                    Effect::Permit => permitted = true,
                    // Filtered out above: approvals and limits apply after the decision.
                    Effect::Approve | Effect::Limit => {}
                }
            }
        }
        if !forbidden.is_empty() {
            Decision::Deny(forbidden)
        } else if permitted || self.default == Default::Allow {
            Decision::Allow
        } else {
            Decision::Deny(Vec::new())
        }
    }

    fn needs_approval(&self, question: &Question<'_>) -> bool {
        let mut approving = self.rules.iter().filter(|r| r.effect == Effect::Approve).peekable();
        if approving.peek().is_none() {
            return false;
        }
        // A context that cannot be built asks: approval is the safe side.
        let Ok(context) = Self::context(question) else { return true };
        approving.any(|rule| Self::matches(rule, &context))
    }

    fn rate_limits(&self, question: &Question<'_>) -> Vec<NamedLimit> {
        let mut limiting = self.rules.iter().filter(|r| r.effect == Effect::Limit).peekable();
        if limiting.peek().is_none() {
            return Vec::new();
        }
        let Ok(context) = Self::context(question) else { return Vec::new() };
        limiting
            .filter(|rule| Self::matches(rule, &context))
            .filter_map(|rule| rule.limit.map(|limit| NamedLimit { rule: rule.id.clone(), limit }))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{Tool, ToolAnnotations};

    use super::*;

    const RULES: &str = r#"
        default = "allow"

        [[rule]]
        id = "destructive-needs-admin"
        effect = "forbid"
        when = 'item.kind == "tool" && has(item.annotations.destructiveHint) && item.annotations.destructiveHint && !("admin" in principal.scopes)'

        [[rule]]
        id = "no-root"
        effect = "forbid"
        when = 'has(context.arguments.path) && context.arguments.path.startsWith("/root")'
    "#;

    fn tool(name: &str, destructive: bool) -> Tool {
        let mut tool = Tool::new(name, std::default::Default::default());
        if destructive {
            tool.annotations =
                Some(ToolAnnotations { destructive_hint: Some(true), ..std::default::Default::default() });
        }
        tool
    }

    #[test]
    fn scopes_annotations_and_arguments_decide() {
        let policy: RulePolicy = RULES.parse().unwrap();
        assert_eq!(policy.len(), 2);
        let delete = tool("delete", true);
        let read = tool("read", false);
        let mut admin = Principal::new(None, Some("ann".into()), None);
        admin.scopes = vec!["admin".into()];
        let mut user = Principal::new(None, Some("bob".into()), None);
        user.scopes = vec!["mcp".into()];
        let ask = |principal: Option<&Principal>, tool: &Tool, arguments: Option<&mcp_types::JsonObject>| {
            policy.decide(&Question::new(principal, Item::Tool(tool), arguments))
        };
        assert_eq!(ask(Some(&admin), &delete, None), Decision::Allow);
        assert_eq!(ask(Some(&user), &delete, None), Decision::Deny(vec!["destructive-needs-admin".into()]));
        assert_eq!(ask(None, &delete, None), Decision::Deny(vec!["destructive-needs-admin".into()]));
        assert_eq!(ask(None, &read, None), Decision::Allow);
        let root = json!({"path": "/root/.ssh", "n": 1.5, "x": null});
        let home = json!({"path": "/srv/bob"});
        assert_eq!(ask(Some(&admin), &read, root.as_object()), Decision::Deny(vec!["no-root".into()]));
        assert_eq!(ask(Some(&admin), &read, home.as_object()), Decision::Allow);
    }

    #[test]
    fn limit_rules_name_their_rates_and_decide_nothing() {
        let rules = r#"
            default = "allow"

            [[rule]]
            id = "search-cap"
            effect = "limit"
            rate = "30/minute"
            burst = 5
            when = 'action == "tools/call" && item.name == "search"'

            [[rule]]
            id = "everything"
            effect = "limit"
            rate = "100/10s"
            when = 'item.kind == "tool"'
        "#;
        let policy: RulePolicy = rules.parse().unwrap();
        let search = tool("search", false);
        let read = tool("read", false);
        let caller = Principal::new(None, Some("ann".into()), None);
        let arguments = json!({"q": "x"});
        let question = |tool| Question::new(Some(&caller), Item::Tool(tool), arguments.as_object());
        assert_eq!(policy.decide(&question(&search)), Decision::Allow, "a limit decides nothing");
        let limits = policy.rate_limits(&question(&search));
        assert_eq!(limits.len(), 2, "{limits:?}");
        assert_eq!(&*limits[0].rule, "search-cap");
        assert_eq!(limits[0].limit, RateLimit::new(30, Duration::from_secs(60)).with_burst(5));
        assert_eq!(limits[1].limit, RateLimit::new(100, Duration::from_secs(10)));
        let limits = policy.rate_limits(&question(&read));
        assert_eq!(limits.iter().map(|l| &*l.rule).collect::<Vec<_>>(), ["everything"]);

        for (rate, per) in
            [("1/second", 1), ("2/hour", 3600), ("3/day", 86_400), ("5/2m", 120), ("7/1h", 3600)]
        {
            assert_eq!(parse_rate(rate).unwrap().per, Duration::from_secs(per), "{rate}");
        }
        for bad in ["10", "0/minute", "x/minute", "10/fortnight", "10/0s", "10/", "10/5x"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        let refused = |text: &str| text.parse::<RulePolicy>().unwrap_err().0;
        let no_rate = "[[rule]]\nid = \"l\"\neffect = \"limit\"\nwhen = 'true'\n";
        assert!(refused(no_rate).contains("needs a `rate`"), "{}", refused(no_rate));
        let stray = "[[rule]]\nid = \"f\"\neffect = \"forbid\"\nrate = \"1/second\"\nwhen = 'true'\n";
        assert!(refused(stray).contains("only a `limit` rule"), "{}", refused(stray));
        let bad_rate = "[[rule]]\nid = \"l\"\neffect = \"limit\"\nrate = \"lots\"\nwhen = 'true'\n";
        assert!(
            refused(bad_rate).contains("\"l\"") && refused(bad_rate).contains("`rate`"),
            "{}",
            refused(bad_rate)
        );
    }

    #[test]
    fn the_documented_policy_compiles_and_decides() {
        let guide = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/OPERATIONS.md"));
        let section = &guide[guide.find("## Policy").expect("the policy section")..];
        let start = section.find("```toml\n").expect("an example") + "```toml\n".len();
        let end = start + section[start..].find("```").expect("its end");
        let policy: RulePolicy = section[start..end].parse().unwrap_or_else(|e| panic!("{e}"));
        let write = tool("write", false);
        let mut writer = Principal::new(None, Some("ann".into()), None);
        writer.scopes = vec!["mcp:write".into()];
        assert_eq!(policy.decide(&Question::new(Some(&writer), Item::Tool(&write), None)), Decision::Allow);
        assert_eq!(
            policy.decide(&Question::new(None, Item::Tool(&write), None)),
            Decision::Deny(vec!["writes-need-the-write-scope".into()])
        );
        // Every example of the section compiles (the approve and limit rules too).
        let section = &section[..section.find("\n## ").unwrap_or(section.len())];
        let examples: Vec<&str> =
            section.split("```toml\n").skip(1).map(|b| &b[..b.find("```").unwrap()]).collect();
        assert!(examples.len() >= 3, "{}", examples.len());
        for example in examples {
            example.parse::<RulePolicy>().unwrap_or_else(|e| panic!("{e}\n{example}"));
        }
    }

    #[test]
    fn what_no_rule_decides_is_denied_unless_allowed_and_mistakes_are_refused() {
        let read = tool("read", false);
        let deny: RulePolicy = "".parse().unwrap();
        assert_eq!(deny.decide(&Question::new(None, Item::Tool(&read), None)), Decision::Deny(vec![]));
        let permit: RulePolicy =
            "[[rule]]\nid = \"reads\"\neffect = \"permit\"\nwhen = 'item.name == \"read\"'\n"
                .parse()
                .unwrap();
        assert_eq!(permit.decide(&Question::new(None, Item::Tool(&read), None)), Decision::Allow);
        let error = "[[rule]]\nid = \"x\"\neffect = \"permit\"\nwhen = 'item.name =='\n"
            .parse::<RulePolicy>()
            .unwrap_err();
        assert!(error.0.contains("does not compile"), "{error}");
        let error =
            "[[rule]]\nid = \"x\"\neffect = \"maybe\"\nwhen = 'true'\n".parse::<RulePolicy>().unwrap_err();
        assert!(error.0.contains("do not parse"), "{error}");
    }

    #[test]
    fn approve_rules_ask_without_deciding() {
        let policy: RulePolicy = r#"
            [[rule]]
            id = "reads"
            effect = "permit"
            when = 'true'

            [[rule]]
            id = "big-payments"
            effect = "approve"
            when = 'action == "tools/call" && has(context.arguments.amount) && context.arguments.amount > 1000'
        "#
        .parse()
        .unwrap();
        let pay = tool("pay", false);
        let arguments = |amount: i64| {
            let mut map = mcp_types::JsonObject::new();
            map.insert("amount".into(), json!(amount));
            map
        };
        let big = arguments(5000);
        let small = arguments(10);
        assert!(policy.needs_approval(&Question::new(None, Item::Tool(&pay), Some(&big))));
        assert!(!policy.needs_approval(&Question::new(None, Item::Tool(&pay), Some(&small))));
        assert!(!policy.needs_approval(&Question::new(None, Item::Tool(&pay), None)), "a list asks nothing");
        // It decides nothing: allowed either way (by `reads`), and alone it allows nothing.
        assert_eq!(policy.decide(&Question::new(None, Item::Tool(&pay), Some(&big))), Decision::Allow);
        let only: RulePolicy = "[[rule]]\nid = \"a\"\neffect = \"approve\"\nwhen = 'true'\n".parse().unwrap();
        assert_eq!(only.decide(&Question::new(None, Item::Tool(&pay), None)), Decision::Deny(Vec::new()));
        let plain: RulePolicy = RULES.parse().unwrap();
        assert!(!plain.needs_approval(&Question::new(None, Item::Tool(&pay), Some(&big))));
    }
}
