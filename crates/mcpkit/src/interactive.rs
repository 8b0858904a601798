//! What the CLI answers when a server asks for something: elicitation and sampling at the
//! prompt (questions on stderr, answers on stdin, one dialogue at a time), roots from `--root`.
//! `call`, `read` and `prompt` take these options ([`InteractionArgs`], [`AnswerArgs`]): the server asks while it
//! handles one of their requests. `list` and `describe` take them too, to declare the same
//! capabilities (a server may list a tool only to clients that can answer its questions); the
//! other client commands declare no such capability.
//!
//! Prompting happens when stdin and stderr are terminals, or with `--interactive` (stdin may
//! then be a pipe: that is how scripts answer); `--no-input` never prompts. Without prompting
//! no elicitation or sampling handler is set, so the client does not declare those
//! capabilities and the server knows not to ask; [`explain`] turns the resulting
//! "missing capability" error into advice.

mod console;
mod elicit;
mod form;
mod sampling;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use mcp_client::{ClientError, Handlers};
use mcp_types::elicitation::approval;
use mcp_types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ErrorObject, ListRootsResult,
    MissingRequiredClientCapabilityData, Root, error::code,
};

use console::Console;

/// How `call`, `read` and `prompt` answer what the server asks while it handles their request,
/// and show its progress.
#[derive(clap::Args, Debug)]
pub(crate) struct InteractionArgs {
    #[command(flatten)]
    pub(crate) answers: AnswerArgs,
    /// Show progress on stderr even when it is not a terminal, as `progress N/TOTAL message` lines.
    #[arg(long, help_heading = INTERACTION)]
    pub(crate) progress: bool,
}

/// What the client answers, and so the capabilities it declares: taken by `list` and
/// `describe` as well, whose results may depend on those capabilities.
#[derive(clap::Args, Debug)]
pub(crate) struct AnswerArgs {
    /// Answer the server's questions (elicitation, sampling) on stdin even when it is not a
    /// terminal (prompts go to stderr).
    #[arg(long, conflicts_with = "no_input", help_heading = INTERACTION)]
    pub(crate) interactive: bool,
    /// Never prompt, not even on a terminal: the server sees no elicitation or sampling support.
    #[arg(long, help_heading = INTERACTION)]
    pub(crate) no_input: bool,
    /// Share this directory or file with the server as a root (repeatable).
    #[arg(long = "root", value_name = "PATH", help_heading = INTERACTION)]
    pub(crate) roots: Vec<PathBuf>,
    /// Approve, without asking, a tool the server (or gateway) wants a person's approval for
    /// (its approval form); other questions are still asked on a terminal, or declined.
    #[arg(long, help_heading = INTERACTION)]
    pub(crate) yes: bool,
}

/// The `--help` heading of [`InteractionArgs`].
const INTERACTION: &str = "Interaction";

/// Whether to prompt: never with `--no-input`, always with `--interactive`, else when both
/// stdin and stderr are terminals.
pub(crate) fn enabled(interactive: bool, no_input: bool) -> bool {
    !no_input && (interactive || (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()))
}

/// The handlers for `call`, `read` or `prompt`: prompts when [`enabled`], roots from `--root`.
/// `server` is how prompts name the server.
pub(crate) fn handlers(interaction: &AnswerArgs, server: &str) -> anyhow::Result<Handlers> {
    let mut handlers = Handlers::default();
    if !interaction.roots.is_empty() {
        let roots = roots(&interaction.roots)?;
        handlers = handlers.on_roots(false, move || {
            let roots = roots.clone();
            async move { Ok(roots) }
        });
    }
    let yes = interaction.yes;
    if !enabled(interaction.interactive, interaction.no_input) {
        if yes {
            // Approval forms approved; any other question declined (nobody to ask).
            handlers = handlers.on_elicit(false, |params| async move {
                Ok(match &params {
                    ElicitRequestParams::Form(form) if approval::is_approval(form) => approval::approve(),
                    _ => ElicitResult::new(ElicitAction::Decline),
                })
            });
        }
        return Ok(handlers);
    }
    let console = Console::start().context("cannot start the prompt thread")?;
    let server = server.to_owned();
    let (c, s) = (console.clone(), server.clone());
    handlers = handlers.on_elicit(true, move |params| {
        let (console, server) = (c.clone(), s.clone());
        async move {
            if let ElicitRequestParams::Form(form) = &params {
                if yes && approval::is_approval(form) {
                    return Ok(approval::approve());
                }
            }
            match console.run(move |io| elicit::dialogue(io, &server, &params)).await {
                Some(Ok(result)) => Ok(result),
                Some(Err(why)) => Err(ErrorObject::invalid_params(why)),
                None => Err(ErrorObject::internal("the prompt is not available")),
            }
        }
    });
    handlers = handlers.on_sample(move |params| {
        let (console, server) = (console.clone(), server.clone());
        async move {
            console
                .run(move |io| sampling::dialogue(io, &server, &params))
                .await
                .unwrap_or_else(|| Err(ErrorObject::internal("the prompt is not available")))
        }
    });
    Ok(handlers)
}

/// `file://` and the percent-encoded absolute path.
fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = if cfg!(windows) { text.replace('\\', "/") } else { text.into_owned() };
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The roots of `--root` paths: canonical `file://` URIs, named after their last component.
pub(crate) fn roots(paths: &[PathBuf]) -> anyhow::Result<ListRootsResult> {
    let mut roots = Vec::new();
    for path in paths {
        let full = path.canonicalize().with_context(|| format!("invalid --root {}", path.display()))?;
        let name = full.file_name().map_or_else(|| full.to_string_lossy(), |n| n.to_string_lossy());
        roots.push(Root::new(file_uri(&full)).with_name(name));
    }
    Ok(ListRootsResult::new(roots))
}

/// A client error with advice when the server needed something this command did not offer
/// (it answered "missing required client capability" naming elicitation, sampling or roots).
pub(crate) fn explain(error: ClientError, interaction: &AnswerArgs) -> anyhow::Error {
    let needed = error
        .error_object()
        .filter(|e| e.code == code::MISSING_REQUIRED_CLIENT_CAPABILITY)
        .and_then(|e| e.data_as::<MissingRequiredClientCapabilityData>())
        .map(|d| d.required_capabilities);
    let Some(needed) = needed else { return error.into() };
    let prompting = enabled(interaction.interactive, interaction.no_input);
    let mut asks = Vec::new();
    if needed.elicitation.is_some() && !prompting {
        asks.push("to ask you questions (elicitation)");
    }
    if needed.sampling.is_some() && !prompting {
        asks.push("a reply from you as its model (sampling)");
    }
    let mut advice = Vec::new();
    if !asks.is_empty() {
        let how = if interaction.no_input {
            "which --no-input forbids"
        } else {
            "which mcpkit does on a terminal, or with --interactive to answer on stdin"
        };
        advice.push(format!("the server wants {}, {how}", asks.join(" and ")));
    }
    if needed.roots.is_some() && interaction.roots.is_empty() {
        advice.push("the server wants roots: share directories with --root PATH".to_owned());
    }
    if advice.is_empty() {
        return error.into();
    }
    anyhow!("{error}: {}", advice.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_canonical_file_uris_named_after_the_directory() {
        let base = std::env::temp_dir().join(format!("mcpkit roots {}", std::process::id()));
        let dir = base.join("my project");
        std::fs::create_dir_all(&dir).unwrap();
        let messy = base.join("my project").join("..").join("my project");
        let result = roots(std::slice::from_ref(&messy)).unwrap();
        let root = &result.roots[0];
        assert_eq!(root.name.as_deref(), Some("my project"));
        assert!(root.uri.starts_with("file:///"), "{}", root.uri);
        assert!(root.uri.ends_with("/my%20project"), "{}", root.uri);
        assert!(!root.uri.contains(".."), "{}", root.uri);
        assert!(roots(&[base.join("missing")]).unwrap_err().to_string().contains("invalid --root"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn file_uris_escape_what_is_not_a_path_character() {
        assert_eq!(file_uri(Path::new("/a b/c#d%e/é")), "file:///a%20b/c%23d%25e/%C3%A9");
    }
}
