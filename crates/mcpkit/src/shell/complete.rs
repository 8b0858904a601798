//! Tab completion for `mcpkit shell`: the command, then the tool, prompt or resource it names,
//! then the argument keys the tool's input schema or the prompt declares.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// What the server offers, by name, with the argument keys of each tool and prompt.
#[derive(Debug, Default)]
pub(crate) struct Names {
    pub(crate) tools: BTreeMap<String, Vec<String>>,
    pub(crate) prompts: BTreeMap<String, Vec<String>>,
    pub(crate) resources: Vec<String>,
}

/// The shell's rustyline helper: completion only.
pub(crate) struct ShellHelper {
    names: Arc<Mutex<Names>>,
    commands: Vec<&'static str>,
}

impl ShellHelper {
    pub(crate) fn new(names: Arc<Mutex<Names>>, commands: Vec<&'static str>) -> Self {
        ShellHelper { names, commands }
    }

    /// The start of the word being completed in `line[..pos]`, and the candidates.
    fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &before[start..];
        let done: Vec<&str> = before[..start].split_whitespace().collect();
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let all: Vec<String> = match done.as_slice() {
            [] => self.commands.iter().map(|c| format!("{c} ")).collect(),
            ["call" | "describe"] => names.tools.keys().map(|n| format!("{n} ")).collect(),
            ["prompt"] => names.prompts.keys().map(|n| format!("{n} ")).collect(),
            ["read"] => names.resources.clone(),
            ["list"] => ["tools", "prompts", "resources", "templates"].map(str::to_owned).to_vec(),
            ["listen", ..] => {
                let mut all: Vec<String> =
                    ["tools", "prompts", "resources", "off"].map(str::to_owned).to_vec();
                all.extend(names.resources.iter().cloned());
                all
            }
            ["call", tool, given @ ..] => keys(names.tools.get(*tool), given),
            ["prompt", prompt, given @ ..] => keys(names.prompts.get(*prompt), given),
            _ => Vec::new(),
        };
        (start, all.into_iter().filter(|c| c.starts_with(word)).collect())
    }
}

/// `KEY=` for each key not given yet.
fn keys(declared: Option<&Vec<String>>, given: &[&str]) -> Vec<String> {
    let given: Vec<&str> = given.iter().filter_map(|w| w.split_once('=').map(|(k, _)| k)).collect();
    declared
        .map(|keys| keys.iter().filter(|k| !given.contains(&k.as_str())).map(|k| format!("{k}=")).collect())
        .unwrap_or_default()
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, candidates) = self.candidates(line, pos);
        let pairs = candidates
            .into_iter()
            .map(|c| Pair { display: c.trim_end().to_owned(), replacement: c })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

impl Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper() -> ShellHelper {
        let names = Names {
            tools: BTreeMap::from([
                ("echo".to_owned(), vec!["text".to_owned()]),
                ("add".to_owned(), vec!["a".to_owned(), "b".to_owned()]),
            ]),
            prompts: BTreeMap::from([("poem".to_owned(), vec!["subject".to_owned()])]),
            resources: vec!["demo://readme".to_owned()],
        };
        ShellHelper::new(Arc::new(Mutex::new(names)), vec!["call", "complete", "list", "read"])
    }

    fn complete(line: &str) -> Vec<String> {
        helper().candidates(line, line.len()).1
    }

    #[test]
    fn commands_names_then_keys() {
        assert_eq!(complete("c"), ["call ", "complete "]);
        assert_eq!(complete("call "), ["add ", "echo "]);
        assert_eq!(complete("call e"), ["echo "]);
        assert_eq!(complete("call add "), ["a=", "b="]);
        assert_eq!(complete("call add a=1 "), ["b="]);
        assert_eq!(complete("read d"), ["demo://readme"]);
        assert_eq!(complete("list t"), ["tools", "templates"]);
        assert_eq!(complete("prompt poem s"), ["subject="]);
        assert_eq!(complete("prompt p"), ["poem "]);
        assert_eq!(helper().candidates("call add a=1 b", 14), (13, vec!["b=".to_owned()]));
    }
}
