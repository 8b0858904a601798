//! `mcpkit shell`: an interactive session on one lasting connection. rustyline edits the line
//! (history, Ctrl-R, tab completion of commands, tool, prompt and resource names, and argument
//! keys from the schemas); each command runs on the connection and prints as the one-shot
//! commands do on a terminal; `listen` prints notifications above the prompt as they arrive.

mod complete;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail};
use mcp_client::{Client, SubscriptionEvent};
use mcp_types::{
    CallToolRequestParams, GetPrompt, GetPromptRequestParams, ReadResource, ReadResourceRequestParams,
    ServerNotification, SubscriptionFilter,
};
use rustyline::error::ReadlineError;
use rustyline::{ExternalPrinter, history::DefaultHistory};
use serde_json::{Map, Value, json};

use crate::interactive::AnswerArgs;
use crate::output;
use crate::target::TargetArgs;
use complete::{Names, ShellHelper};

#[derive(clap::Args, Debug)]
pub(crate) struct ShellArgs {
    #[command(flatten)]
    answers: AnswerArgs,
    #[command(flatten)]
    target: TargetArgs,
}

/// The commands, for `help` and completion.
const COMMANDS: [(&str, &str); 11] = [
    ("call", "call TOOL [KEY=VALUE... | {JSON}]   call a tool"),
    ("describe", "describe TOOL                       a tool's signature and schemas"),
    ("exit", "exit                                end the session (also Ctrl-D)"),
    ("help", "help                                this list"),
    ("info", "info                                the server: revision, transport, capabilities"),
    ("list", "list tools|prompts|resources|templates"),
    ("listen", "listen [tools] [prompts] [resources] [URI...] | listen off   notifications as they arrive"),
    ("prompt", "prompt NAME [KEY=VALUE...]          get a prompt"),
    ("read", "read URI                            read a resource"),
    ("refresh", "refresh                             list everything again (for completion)"),
    ("quit", "quit                                end the session"),
];

pub(crate) fn run(args: ShellArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    let code = match runtime.block_on(args.target.connect(Some(&args.answers))) {
        Ok(client) => {
            let code = session(&runtime, &client);
            runtime.block_on(client.close());
            code
        }
        Err(e) => {
            eprintln!("mcpkit: {}", crate::client::one_line(&e));
            crate::status::of(&e).exit_code()
        }
    };
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

/// Where the history is kept: $XDG_STATE_HOME/mcpkit/shell_history, else
/// ~/.local/state/mcpkit/shell_history.
fn history_file() -> Option<PathBuf> {
    let base =
        std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/state"))
        })?;
    Some(base.join("mcpkit").join("shell_history"))
}

fn session(runtime: &tokio::runtime::Runtime, client: &Client) -> ExitCode {
    let names = Arc::new(Mutex::new(Names::default()));
    if let Err(e) = runtime.block_on(refresh(client, &names)) {
        eprintln!(
            "note: cannot list what the server offers, for completion: {}",
            crate::client::one_line(&e)
        );
    }
    let mut editor: rustyline::Editor<ShellHelper, DefaultHistory> = match rustyline::Editor::new() {
        Ok(editor) => editor,
        Err(e) => {
            eprintln!("mcpkit: cannot start the line editor: {e}");
            return ExitCode::from(2);
        }
    };
    editor.set_helper(Some(ShellHelper::new(names.clone(), COMMANDS.iter().map(|(c, _)| *c).collect())));
    let history = history_file();
    if let Some(file) = &history {
        let _ = editor.load_history(file);
    }
    let server =
        client.server_info().map_or_else(|| "the server".to_owned(), |s| format!("{} {}", s.name, s.version));
    println!(
        "connected to {} ({}, {}); `help` lists the commands, Tab completes, Ctrl-D ends",
        crate::terminal::line(server.trim()),
        client.protocol_version().as_str(),
        transport_name(client)
    );
    let mut listener: Option<tokio::task::JoinHandle<()>> = None;
    loop {
        match editor.readline("mcp> ") {
            Ok(line) => {
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(line);
                let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                match command {
                    "exit" | "quit" => break,
                    "listen" => {
                        if let Some(task) = listener.take() {
                            task.abort();
                        }
                        if rest.trim() == "off" {
                            println!("not listening");
                            continue;
                        }
                        match editor.create_external_printer() {
                            Ok(printer) => match start_listening(runtime, client, &names, rest, printer) {
                                Ok(task) => listener = Some(task),
                                Err(e) => eprintln!("error: {}", crate::client::one_line(&e)),
                            },
                            Err(e) => eprintln!("error: cannot print notifications: {e}"),
                        }
                    }
                    _ => {
                        let work = execute(client, &names, command, rest.trim());
                        // Ctrl-C cancels the command, not the session.
                        let result = runtime.block_on(async {
                            tokio::select! {
                                result = work => result,
                                _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted")),
                            }
                        });
                        if let Err(e) = result {
                            eprintln!("error: {}", crate::client::one_line(&e));
                        }
                    }
                }
            }
            // Ctrl-C at the prompt clears the line.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("mcpkit: {e}");
                break;
            }
        }
    }
    if let Some(task) = listener {
        task.abort();
    }
    if let Some(file) = &history {
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(file);
    }
    ExitCode::SUCCESS
}

fn transport_name(client: &Client) -> &'static str {
    match client.transport_kind() {
        mcp_client::transport::TransportKind::Stdio => "stdio",
        mcp_client::transport::TransportKind::StreamableHttp => "streamable-http",
        mcp_client::transport::TransportKind::HttpSse => "http+sse",
        _ => "other",
    }
}

/// Lists what the server offers, for completion (what it does not offer stays empty).
async fn refresh(client: &Client, names: &Mutex<Names>) -> anyhow::Result<()> {
    let caps = client.server_capabilities();
    let mut fresh = Names::default();
    if caps.tools.is_some() {
        for tool in client.list_all_tools().await? {
            let schema = serde_json::to_value(&tool.input_schema).unwrap_or(Value::Null);
            let keys = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            fresh.tools.insert(tool.name, keys);
        }
    }
    if caps.prompts.is_some() {
        for prompt in client.list_all_prompts().await? {
            let keys = prompt.arguments.unwrap_or_default().into_iter().map(|a| a.name).collect();
            fresh.prompts.insert(prompt.name, keys);
        }
    }
    if caps.resources.is_some() {
        fresh.resources = client.list_all_resources().await?.into_iter().map(|r| r.uri).collect();
    }
    *names.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
    Ok(())
}

/// `KEY=VALUE` words (VALUE is JSON when it parses as JSON), or one JSON object.
fn arguments(rest: &str) -> anyhow::Result<Option<Map<String, Value>>> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(None);
    }
    if rest.starts_with('{') {
        return match serde_json::from_str(rest)? {
            Value::Object(map) => Ok(Some(map)),
            _ => bail!("the arguments must be a JSON object"),
        };
    }
    let mut map = Map::new();
    for word in words(rest)? {
        let Some((key, value)) = word.split_once('=') else {
            bail!("{word:?}: expected KEY=VALUE");
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
        map.insert(key.to_owned(), value);
    }
    Ok(Some(map))
}

/// Splits `text` into words: whitespace between them, `'…'` and `"…"` quoting.
fn words(text: &str) -> anyhow::Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if quote.is_some() {
        bail!("a quote is not closed");
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

async fn execute(client: &Client, names: &Mutex<Names>, command: &str, rest: &str) -> anyhow::Result<()> {
    let text = |value: &Value, render: fn(&Value) -> String| output::write(&terminal_text(&render(value)));
    match command {
        "help" => {
            for (_, usage) in COMMANDS {
                println!("  {usage}");
            }
        }
        "info" => {
            let info = json!({
                "serverInfo": client.server_info(),
                "protocolVersion": client.protocol_version().as_str(),
                "era": if client.protocol_version().is_modern() { "modern" } else { "legacy" },
                "transport": transport_name(client),
                "serverVersions": client.server_versions(),
                "capabilities": client.server_capabilities(),
                "instructions": client.instructions(),
            });
            text(&info, output::info)?;
        }
        "refresh" => refresh(client, names).await?,
        "list" => {
            let value = match rest {
                "tools" => json!({ "tools": client.list_all_tools().await? }),
                "prompts" => json!({ "prompts": client.list_all_prompts().await? }),
                "resources" => json!({ "resources": client.list_all_resources().await? }),
                "templates" => json!({ "resourceTemplates": client.list_all_resource_templates().await? }),
                _ => bail!("list what? tools, prompts, resources or templates"),
            };
            text(&value, output::list)?;
            refresh(client, names).await?;
        }
        "describe" => {
            let tools = client.list_all_tools().await?;
            let tool =
                tools.iter().find(|t| t.name == rest).ok_or_else(|| anyhow!("unknown tool {rest:?}"))?;
            text(&serde_json::to_value(tool)?, output::tool)?;
        }
        "call" => {
            let (tool, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if tool.is_empty() {
                bail!("call which tool? (Tab lists them)");
            }
            let mut params = CallToolRequestParams::new(tool);
            params.arguments = arguments(rest)?;
            // The progress bar on stderr, as for `mcpkit call`; erased when the call ends.
            let progress = crate::progress::Tracker::new(crate::progress::Style::detect(false));
            let result = client.call_tool_raw_with(&params, &progress.options(None)).await;
            drop(progress);
            let (result, raw) = result?;
            output::write(&terminal_text(&output::call(&serde_json::from_str(raw.get())?)))?;
            if result.is_error == Some(true) {
                println!("(the tool reported an error)");
            }
        }
        "read" => {
            if rest.is_empty() {
                bail!("read which resource? (Tab lists them)");
            }
            let params = ReadResourceRequestParams::new(rest);
            let (_, raw) = client.request_raw::<ReadResource>(&params, &Default::default()).await?;
            text(&serde_json::from_str(raw.get())?, output::read)?;
        }
        "prompt" => {
            let (name, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if name.is_empty() {
                bail!("which prompt? (Tab lists them)");
            }
            let mut params = GetPromptRequestParams::new(name);
            let arguments: BTreeMap<String, String> = arguments(rest)?
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect();
            params.arguments = (!arguments.is_empty()).then_some(arguments);
            let (_, raw) = client.request_raw::<GetPrompt>(&params, &Default::default()).await?;
            text(&serde_json::from_str(raw.get())?, output::prompt)?;
        }
        other => bail!("unknown command {other:?} (`help` lists them)"),
    }
    Ok(())
}

/// Text for the terminal, ending with a newline.
fn terminal_text(text: &str) -> String {
    let text = crate::terminal::text(text);
    if text.ends_with('\n') { text.into_owned() } else { format!("{text}\n") }
}

/// Starts printing the notifications `rest` asks for (every list when it names none) above
/// the prompt, until `listen off`, another `listen`, or the end.
/// Listens for what `rest` names, printing each notification above the prompt; a list change
/// also lists that kind again, so that Tab completes the names the server offers now.
fn start_listening<P: ExternalPrinter + Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    client: &Client,
    names: &Arc<Mutex<Names>>,
    rest: &str,
    mut printer: P,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let mut filter = SubscriptionFilter::default();
    let mut uris = Vec::new();
    for word in rest.split_whitespace() {
        match word {
            "tools" => filter.tools_list_changed = Some(true),
            "prompts" => filter.prompts_list_changed = Some(true),
            "resources" => filter.resources_list_changed = Some(true),
            uri => uris.push(uri.to_owned()),
        }
    }
    if filter == SubscriptionFilter::default() {
        filter.tools_list_changed = Some(true);
        filter.prompts_list_changed = Some(true);
        filter.resources_list_changed = Some(true);
    }
    filter.resource_subscriptions = (!uris.is_empty()).then_some(uris);
    let mut subscription = runtime.block_on(client.listen(filter.clone()))?;
    let (client, names) = (client.clone(), names.clone());
    Ok(runtime.spawn(async move {
        while let Some(event) = subscription.next().await {
            let changed_list = matches!(
                &event,
                SubscriptionEvent::Notification(
                    ServerNotification::ToolListChanged(_)
                        | ServerNotification::PromptListChanged(_)
                        | ServerNotification::ResourceListChanged(_)
                )
            );
            if changed_list {
                if let Err(e) = refresh(&client, &names).await {
                    tracing::debug!("listing again for completion failed: {e}");
                }
            }
            let line = match event {
                SubscriptionEvent::Acknowledged(granted) => {
                    crate::listen::listening(&granted, &filter, "`listen off` stops")
                }
                SubscriptionEvent::Notification(n) => match crate::listen::notification_json(&n) {
                    Ok(value) => crate::terminal::line(&crate::listen::text(&value)).into_owned(),
                    Err(_) => continue,
                },
                SubscriptionEvent::Ended(Ok(())) => "listening ended".to_owned(),
                SubscriptionEvent::Ended(Err(e)) => format!("listening ended: {e}"),
                _ => continue,
            };
            if printer.print(format!("{line}\n")).is_err() {
                return;
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_words_or_json() {
        assert_eq!(arguments("").unwrap(), None);
        let a = arguments(r#"a=1 b=two "c=with space" d='{"x": 1}'"#).unwrap().unwrap();
        assert_eq!(Value::Object(a), json!({"a": 1, "b": "two", "c": "with space", "d": {"x": 1}}));
        let a = arguments(r#"{"a": [1]}"#).unwrap().unwrap();
        assert_eq!(Value::Object(a), json!({"a": [1]}));
        assert!(arguments("novalue").unwrap_err().to_string().contains("KEY=VALUE"));
        assert!(arguments("a='open").unwrap_err().to_string().contains("not closed"));
        assert!(arguments("[1]").unwrap_err().to_string().contains("KEY=VALUE"));
    }
}
