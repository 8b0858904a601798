//! The client commands: `info`, `list`, `call`, `read`, `prompt`, `complete`, `listen`.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use mcp_client::{Client, ClientError, RequestOptions};
use mcp_types::{
    Complete, CompleteRequestParams, GetPrompt, PromptReference, ReadResource, ResourceTemplateReference,
};
use serde_json::{Map, Value, json};

use crate::interactive::{AnswerArgs, InteractionArgs};
use crate::status::{self, Status};
use crate::target::TargetArgs;
use crate::{bench, interactive, listen, output, progress, save, server_log, signals};

/// What `mcpkit list` lists.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum ListKind {
    /// Tools.
    Tools,
    /// Resources.
    Resources,
    /// Resource templates.
    Templates,
    /// Prompts.
    Prompts,
    /// Skills (the skills extension): each skill's `SKILL.md` URI, description and files.
    Skills,
}

/// A client command with its arguments.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum ClientCommand {
    /// Connect and show the era, protocol revision, transport, server and capabilities.
    #[command(
        after_help = "Examples:\n  mcpkit info -- mcpkit serve --stdio\n  mcpkit info --url http://127.0.0.1:8080/mcp\n  mcpkit info --server files --json   # an entry of the mcpServers config"
    )]
    Info {
        /// For a legacy server, which names only the revision it agreed to: connect once more
        /// per older revision to find which it also accepts (a stdio server is started again
        /// for each).
        #[arg(long)]
        probe: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// List the server's tools, resources, resource templates or prompts.
    #[command(
        after_help = "Examples:\n  mcpkit list tools -- mcpkit serve --stdio\n  mcpkit list resources --url http://127.0.0.1:8080/mcp\n  mcpkit -v list prompts --server files   # with the wire trace on stderr"
    )]
    List {
        /// What to list.
        kind: ListKind,
        #[command(flatten)]
        target: TargetArgs,
        /// The capabilities declared are those of `call` with the same options: a server that
        /// offers a tool only to clients that can answer its questions lists it when `call`,
        /// run the same way, could use it.
        #[command(flatten)]
        answers: AnswerArgs,
    },
    /// Show a tool in full: its signature, description, annotations and schemas.
    #[command(
        after_help = "Examples:\n  mcpkit describe add -- mcpkit serve --stdio\n  mcpkit describe read_text_file --server files --json   # the definition as the server sent it"
    )]
    Describe {
        /// The tool's name.
        tool: String,
        #[command(flatten)]
        target: TargetArgs,
        /// As for `list`: the capabilities `call` declares with the same options.
        #[command(flatten)]
        answers: AnswerArgs,
    },
    /// Call a tool. Exits 1 when the tool reports an error (`isError: true`).
    #[command(
        after_help = "Examples:\n  mcpkit call echo --arg text=hello -- mcpkit serve --stdio\n  mcpkit call add '{\"a\": 1, \"b\": 2}' --url http://127.0.0.1:8080/mcp\n  mcpkit call countdown --arg seconds=3 --progress -- mcpkit serve --stdio"
    )]
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments, a JSON object.
        arguments: Option<String>,
        /// An argument `KEY=VALUE`; VALUE is JSON when it parses as JSON, else a string.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
        /// On a terminal, show the structured result (`structuredContent`) instead of the text
        /// content (shown by default; the structured result is shown when there is no text).
        #[arg(long)]
        structured: bool,
        /// Write the result's images, audio and blobs to files in DIR (created if missing; never
        /// over an existing file), each named on stderr.
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
        /// When the server makes the call a task (the tasks extension), print the task and exit
        /// instead of following it (see `mcpkit task`). Without it, a task's state shows as
        /// progress until it ends.
        #[arg(long)]
        detach: bool,
        #[command(flatten)]
        interaction: InteractionArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// A skill (the skills extension): its entry, its SKILL.md (verified against the entry), or
    /// the files of a directory of it.
    ///
    /// `get` prints the skill's entry (`skills/get`: its frontmatter, files, digests); `load`
    /// reads its SKILL.md and checks it against the entry (size, digest, frontmatter) before
    /// printing it (exit 4 when it does not match); `dir` lists a directory's files
    /// (`resources/directory/read`). Nothing else of the skill is fetched.
    #[command(
        after_help = "Examples:\n  mcpkit list skills --url http://127.0.0.1:8080/mcp\n  mcpkit skill get skill://pdf-processing/SKILL.md --url http://127.0.0.1:8080/mcp\n  mcpkit skill load skill://pdf-processing/SKILL.md --url http://127.0.0.1:8080/mcp\n  mcpkit skill dir skill://pdf-processing/references --url http://127.0.0.1:8080/mcp"
    )]
    Skill {
        /// What to do.
        action: crate::skill::Action,
        /// The skill's SKILL.md URI (`get`, `load`), or a directory's URI (`dir`).
        uri: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Show the app a tool links to (MCP Apps): print its HTML, or save it with --save DIR and
    /// say what it asks of its sandbox (the origins it may reach, the browser features it wants).
    #[command(
        after_help = "Examples:\n  mcpkit app clock -- mcpkit serve --stdio > clock.html\n  mcpkit app clock --save apps/ --url http://127.0.0.1:8080/mcp"
    )]
    App {
        /// The tool's name.
        tool: String,
        /// Write the HTML to a file in DIR (created if missing; never over an existing file).
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Get, wait for or cancel a task a call became (`call --detach`; the tasks extension).
    ///
    /// A task lives in the server that made it: reach the same one (a server started again by
    /// a stdio command has none of the tasks of the one before). `get` exits 1 for a tool error,
    /// 4 for a failed or cancelled task.
    #[command(
        after_help = "Examples:\n  mcpkit call slow_compute --arg seconds=60 --detach --url http://127.0.0.1:8080/mcp\n  mcpkit task get 3f2a... --url http://127.0.0.1:8080/mcp\n  mcpkit task wait 3f2a... --url http://127.0.0.1:8080/mcp   # answers its questions\n  mcpkit task cancel 3f2a... --url http://127.0.0.1:8080/mcp"
    )]
    Task {
        /// What to do.
        action: crate::task::Action,
        /// The task's id (`taskId`).
        id: String,
        #[command(flatten)]
        interaction: InteractionArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Read a resource.
    #[command(
        after_help = "Examples:\n  mcpkit read demo://readme -- mcpkit serve --stdio\n  mcpkit read demo://notes/42 --url http://127.0.0.1:8080/mcp"
    )]
    Read {
        /// The resource's URI.
        uri: String,
        /// Write the contents (text and blobs) to files in DIR (created if missing; never over an
        /// existing file), each named on stderr.
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
        #[command(flatten)]
        interaction: InteractionArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Get a prompt.
    #[command(
        after_help = "Examples:\n  mcpkit prompt poem --arg subject=rust -- mcpkit serve --stdio\n  mcpkit prompt poem --arg subject=tides --arg style=haiku --url http://127.0.0.1:8080/mcp"
    )]
    Prompt {
        /// The prompt's name.
        name: String,
        /// An argument `KEY=VALUE`.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
        /// Write the messages' images, audio and blobs to files in DIR (created if missing;
        /// never over an existing file), each named on stderr.
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
        #[command(flatten)]
        interaction: InteractionArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Ask for completions of a prompt argument or a resource template variable.
    #[command(
        after_help = "Examples:\n  mcpkit complete --prompt poem style li -- mcpkit serve --stdio\n  mcpkit complete --resource 'demo://notes/{id}' id 4 -- mcpkit serve --stdio"
    )]
    Complete {
        /// Complete an argument of this prompt.
        #[arg(long, value_name = "NAME", conflicts_with = "resource")]
        prompt: Option<String>,
        /// Complete a variable of this resource template.
        #[arg(long, value_name = "URI_TEMPLATE")]
        resource: Option<String>,
        /// The argument (or variable) to complete.
        argument: String,
        /// What has been typed so far.
        #[arg(default_value = "")]
        value: String,
        /// An argument already given, `KEY=VALUE` (repeatable): sent as the completion's
        /// context, for servers whose suggestions depend on the other arguments.
        #[arg(long = "context", value_name = "KEY=VALUE")]
        context: Vec<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Measure a tool: latency percentiles and throughput of calls at a given concurrency, over
    /// one connection. Exits 1 when some calls were tool errors, 3 or 4 when some failed.
    #[command(
        after_help = "Examples:\n  mcpkit bench echo --arg text=hi --requests 5000 --concurrency 16 -- mcpkit serve --stdio\n  mcpkit bench add '{\"a\": 1, \"b\": 2}' --duration 10 --url http://127.0.0.1:8080/mcp --json"
    )]
    Bench {
        /// The tool's name.
        tool: String,
        /// The arguments, a JSON object (the same for every call).
        arguments: Option<String>,
        /// An argument `KEY=VALUE`; VALUE is JSON when it parses as JSON, else a string.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
        #[command(flatten)]
        load: bench::LoadArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Print change notifications as they arrive, until interrupted or the subscription ends.
    ///
    /// Without --tools, --prompts or --resources, every list change (tools, prompts and
    /// resources); --resource URI adds the updates of that resource either way.
    #[command(
        after_help = "Examples:\n  mcpkit listen --url http://127.0.0.1:8080/mcp   # every list change\n  mcpkit listen --tools --prompts --url http://127.0.0.1:8080/mcp\n  mcpkit listen --resource demo://readme -- mcpkit serve --stdio"
    )]
    Listen {
        /// Tool list changes.
        #[arg(long)]
        tools: bool,
        /// Prompt list changes.
        #[arg(long)]
        prompts: bool,
        /// Resource list changes.
        #[arg(long)]
        resources: bool,
        /// Updates of this resource (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resource: Vec<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
}

/// Runs a client command: 0 on success, else the [`Status`](status::Status) of the failure
/// (with one line on stderr, unless a tool reported its error: that is printed as a result).
pub(crate) fn run(command: ClientCommand) -> ExitCode {
    // Diagnostics (the wire trace, a stdio server's stderr) are set up by `crate::logging`: only
    // with -v or RUST_LOG, so that a failure prints exactly one line.
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    // Traced when the OTEL_* variables name an endpoint: one client span for the command, the
    // parent of every request it sends (and so of the servers' spans).
    let tracing = match mcp_trace::Tracing::from_env("mcpkit", "tcp") {
        Ok(tracing) => tracing,
        Err(e) => {
            eprintln!("mcpkit: tracing: {e}");
            None
        }
    };
    let span = tracing.as_ref().map(|t| t.client_span(span_name(&command)));
    // The environment's context goes on with every request: under the command's span when it
    // traces, as it came when it does not (a command that records nothing passes the trace on).
    let context = crate::target::environment_trace_context();
    crate::target::trace_requests(match &span {
        Some(span) => context.with_parent(span.traceparent()),
        None => context,
    });
    let code = match runtime.block_on(dispatch(command)) {
        Ok(code) => code,
        // Whoever read stdout went away (`| head`): nothing more to say, and nothing went wrong.
        Err(e) if e.downcast_ref::<output::WriteError>().is_some_and(output::WriteError::reader_gone) => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "mcpkit: {}", one_line(&e));
            status::of(&e).exit_code()
        }
    };
    // Tasks still running (a stdio server's supervisor, when a signal cut the close short) are
    // dropped, which kills the child they own; blocking work (a DNS lookup) is not waited for
    // beyond this.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    if let (Some(span), Some(tracing)) = (span, tracing) {
        let failed = code != ExitCode::SUCCESS;
        span.end(Vec::new(), failed.then(|| "the command failed".to_owned()));
        tracing.shutdown();
    }
    code
}

/// The client span's name: the method and tool of `call`, else the command.
fn span_name(command: &ClientCommand) -> String {
    match command {
        ClientCommand::Call { tool, .. } => format!("tools/call {tool}"),
        ClientCommand::Info { .. } => "mcpkit info".to_owned(),
        ClientCommand::List { .. } => "mcpkit list".to_owned(),
        ClientCommand::Describe { .. } => "mcpkit describe".to_owned(),
        ClientCommand::Bench { .. } => "mcpkit bench".to_owned(),
        ClientCommand::Read { .. } => "resources/read".to_owned(),
        ClientCommand::Prompt { .. } => "prompts/get".to_owned(),
        ClientCommand::Complete { .. } => "completion/complete".to_owned(),
        ClientCommand::Listen { .. } => "subscriptions/listen".to_owned(),
        ClientCommand::Task { action, .. } => format!("mcpkit task {action:?}").to_lowercase(),
        ClientCommand::App { .. } => "mcpkit app".to_owned(),
        ClientCommand::Skill { .. } => "mcpkit skill".to_owned(),
    }
}

/// The error and its causes on one line, made safe for the terminal (a server's error message
/// is part of it).
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    let text = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    crate::terminal::line(&text).into_owned()
}

fn target_of(command: &ClientCommand) -> &TargetArgs {
    match command {
        ClientCommand::Info { target, .. }
        | ClientCommand::List { target, .. }
        | ClientCommand::Describe { target, .. }
        | ClientCommand::Call { target, .. }
        | ClientCommand::Read { target, .. }
        | ClientCommand::Prompt { target, .. }
        | ClientCommand::Complete { target, .. }
        | ClientCommand::Listen { target, .. }
        | ClientCommand::Task { target, .. }
        | ClientCommand::App { target, .. }
        | ClientCommand::Skill { target, .. }
        | ClientCommand::Bench { target, .. } => target,
    }
}

/// How the command answers the server's requests: `call`, `read` and `prompt` make requests
/// during which the server may ask for something or report progress; `list` and `describe`
/// declare the same capabilities, since what a server lists may depend on them.
fn interaction_of(command: &ClientCommand) -> Option<&AnswerArgs> {
    match command {
        ClientCommand::Call { interaction, .. }
        | ClientCommand::Read { interaction, .. }
        | ClientCommand::Task { interaction, .. }
        | ClientCommand::Prompt { interaction, .. } => Some(&interaction.answers),
        ClientCommand::List { answers, .. } | ClientCommand::Describe { answers, .. } => Some(answers),
        ClientCommand::Info { .. }
        | ClientCommand::App { .. }
        | ClientCommand::Skill { .. }
        | ClientCommand::Complete { .. }
        | ClientCommand::Listen { .. }
        | ClientCommand::Bench { .. } => None,
    }
}

/// Splits the `--arg`s into `KEY` and `VALUE` (the text after the first `=`); a key given twice
/// is an error.
pub(crate) fn split_args(args: &[String]) -> anyhow::Result<Vec<(&str, &str)>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut pairs = Vec::with_capacity(args.len());
    for arg in args {
        let Some((key, value)) = arg.split_once('=') else {
            bail!("invalid --arg {arg:?}: expected KEY=VALUE");
        };
        if key.is_empty() {
            bail!("invalid --arg {arg:?}: empty key");
        }
        if !seen.insert(key) {
            bail!("--arg {key:?} is given more than once");
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// A `--arg` VALUE: JSON when it parses as JSON, else a string.
pub(crate) fn parse_arg(value: &str) -> Value {
    serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()))
}

/// The arguments of `call`, and the `--arg`s whose VALUE parsed as JSON other than a string:
/// `(KEY, VALUE)`, sent as text instead when the tool's schema wants a string there.
fn tool_arguments(json: Option<&str>, args: &[String]) -> anyhow::Result<(Value, Vec<(String, String)>)> {
    let mut map = match json {
        None => Map::new(),
        Some(text) if text.contains("://") && serde_json::from_str::<Value>(text).is_err() => {
            bail!("{text:?} is not JSON arguments: a server at a URL is given with --url {text}")
        }
        Some(text) => match serde_json::from_str(text).context("invalid JSON arguments")? {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => bail!("the arguments must be a JSON object, not {other}"),
        },
    };
    let mut typed = Vec::new();
    for (key, text) in split_args(args)? {
        let value = parse_arg(text);
        if !value.is_string() {
            typed.push((key.to_owned(), text.to_owned()));
        }
        map.insert(key.to_owned(), value);
    }
    let value = if map.is_empty() && json.is_none() { Value::Null } else { Value::Object(map) };
    Ok((value, typed))
}

/// Whether a JSON schema accepts strings only: `"type": "string"` (or `["string"]`), or an
/// `enum` of strings.
fn wants_string(schema: &Value) -> bool {
    let typed_string = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.len() == 1 && types[0] == "string",
        _ => false,
    };
    let string_enum = match schema.get("enum") {
        Some(Value::Array(values)) => !values.is_empty() && values.iter().all(Value::is_string),
        _ => false,
    };
    let type_allows_string = schema.get("type").is_none() || typed_string;
    typed_string || (string_enum && type_allows_string)
}

/// Sends as text the `typed` `--arg`s that the tool's `inputSchema` declares as strings
/// (`--arg text=123` for an echo tool). The tool list is only fetched when there are such
/// arguments (and is cached by the client); when it cannot be had, the arguments stay as they are.
async fn fit_to_schema(client: &Client, tool: &str, arguments: &mut Value, typed: &[(String, String)]) {
    if typed.is_empty() {
        return;
    }
    let tools = match client.list_all_tools().await {
        Ok(tools) => tools,
        Err(e) => {
            tracing::debug!("cannot list the tools to check the --arg types: {e}");
            return;
        }
    };
    let Some(found) = tools.iter().find(|t| t.name == tool) else { return };
    let Ok(schema) = serde_json::to_value(&found.input_schema) else { return };
    let (Value::Object(map), Some(Value::Object(properties))) = (arguments, schema.get("properties")) else {
        return;
    };
    for (key, text) in typed {
        if properties.get(key).is_some_and(wants_string) {
            map.insert(key.clone(), Value::String(text.clone()));
        }
    }
}

async fn dispatch(command: ClientCommand) -> anyhow::Result<ExitCode> {
    // Check what needs no server before connecting.
    let mut call_arguments = (Value::Null, Vec::new());
    let mut prompt_arguments = BTreeMap::new();
    match &command {
        ClientCommand::Call { arguments, args, .. } | ClientCommand::Bench { arguments, args, .. } => {
            call_arguments = tool_arguments(arguments.as_deref(), args)?;
        }
        ClientCommand::Prompt { args, .. } => {
            // Prompt arguments are strings: each VALUE is sent as it was typed.
            for (key, value) in split_args(args)? {
                prompt_arguments.insert(key.to_owned(), value.to_owned());
            }
        }
        ClientCommand::Complete { prompt: None, resource: None, .. } => {
            bail!("give --prompt NAME or --resource URI_TEMPLATE");
        }
        ClientCommand::Complete { context, .. } => {
            split_args(context)?;
        }
        _ => {}
    }
    let target = target_of(&command);
    let json = target.json || !std::io::stdout().is_terminal();
    // Caught before a stdio server is started: from here on, a signal stops it (see `signals`).
    let mut signals = signals::Signals::catch().context("cannot catch signals")?;
    let client = tokio::select! {
        client = async {
            if matches!(command, ClientCommand::App { .. }) {
                target.connect_for_apps().await
            } else {
                target.connect(interaction_of(&command)).await
            }
        } => client?,
        // Dropping the connection attempt drops its transport, which stops the child.
        code = signals.next() => return Ok(interrupted(code)),
    };
    // Subscribed before the first request: every log message it brings is seen.
    let logs = target.log_level.level().map(|min| (client.notifications(), min));
    let work = execute(&client, &command, json, call_arguments, prompt_arguments);
    let (result, signalled) = tokio::select! {
        result = server_log::with_logs(logs, work) => (result, false),
        // Dropping the command's future drops its progress tracker, which erases the bar.
        code = signals.next() => (Ok(interrupted(code)), true),
    };
    // Closing waits (boundedly) for the server to exit; a signal cuts that short, and the
    // runtime's shutdown then kills it.
    tokio::select! {
        () = client.close() => result,
        code = signals.next() => if signalled { result } else { Ok(interrupted(code)) },
    }
}

/// A signal ended the command: the progress line is erased; the exit status is `code`.
fn interrupted(code: ExitCode) -> ExitCode {
    progress::interrupted();
    code
}

async fn execute(
    client: &Client,
    command: &ClientCommand,
    json: bool,
    call_arguments: (Value, Vec<(String, String)>),
    prompt_arguments: BTreeMap<String, String>,
) -> anyhow::Result<ExitCode> {
    match command {
        ClientCommand::Info { probe, target } => {
            let negotiated = client.protocol_version();
            let mut versions = client.server_versions();
            let legacy = !negotiated.is_modern();
            if *probe && legacy {
                versions = vec![negotiated.as_str().to_owned()];
                versions
                    .extend(accepted_older(target, negotiated).await.iter().map(|v| v.as_str().to_owned()));
            }
            let mut info = json!({
                "era": if client.era() == mcp_types::Era::Modern { "modern" } else { "legacy" },
                "protocolVersion": client.protocol_version().as_str(),
                "transport": match client.transport_kind() {
                    mcp_client::transport::TransportKind::Stdio => "stdio",
                    mcp_client::transport::TransportKind::StreamableHttp => "streamable-http",
                    mcp_client::transport::TransportKind::HttpSse => "http+sse",
                    _ => "other",
                },
                "serverInfo": client.server_info(),
                "serverVersions": versions,
                "capabilities": client.server_capabilities(),
                "instructions": client.instructions(),
            });
            if legacy {
                // Whether `serverVersions` was probed, or is the one revision agreed to.
                info["versionsProbed"] = Value::Bool(*probe);
            }
            output::print(json, &info, output::info)?;
        }
        ClientCommand::List { kind, .. } => {
            // A list the server does not offer (no capability for it) is empty, not an error: a
            // script listing what servers offer goes on (the server is not asked: it would
            // answer -32601).
            let capabilities = client.server_capabilities();
            let (offered, key, capability, noun) = match kind {
                ListKind::Tools => (capabilities.tools.is_some(), "tools", "tools", "tools"),
                ListKind::Resources => {
                    (capabilities.resources.is_some(), "resources", "resources", "resources")
                }
                ListKind::Templates => {
                    (capabilities.resources.is_some(), "resourceTemplates", "resources", "resource templates")
                }
                ListKind::Prompts => (capabilities.prompts.is_some(), "prompts", "prompts", "prompts"),
                ListKind::Skills => {
                    (client.serves_skills(), "skills", "io.modelcontextprotocol/skills", "skills")
                }
            };
            if !offered {
                if !json {
                    eprintln!(
                        "note: the server offers no {noun} (it does not declare the `{capability}` capability)"
                    );
                }
                output::print(json, &json!({ key: [] }), output::list)?;
                return Ok(ExitCode::SUCCESS);
            }
            let value = match kind {
                ListKind::Tools => json!({ "tools": client.list_all_tools().await? }),
                ListKind::Resources => json!({ "resources": client.list_all_resources().await? }),
                ListKind::Templates => {
                    json!({ "resourceTemplates": client.list_all_resource_templates().await? })
                }
                ListKind::Prompts => json!({ "prompts": client.list_all_prompts().await? }),
                ListKind::Skills => json!({ "skills": client.list_all_skills().await? }),
            };
            output::print(json, &value, output::list)?;
        }
        ClientCommand::Describe { tool, .. } => {
            let tools = client.list_all_tools().await?;
            let Some(found) = tools.iter().find(|t| &t.name == tool) else {
                let names = tools.iter().map(|t| t.name.as_str());
                let message = format!("unknown tool {tool:?} ({})", some_of(names));
                return Err(status::tag(Status::NotFound, anyhow!(message)));
            };
            output::print(json, &serde_json::to_value(found)?, output::tool)?;
        }
        ClientCommand::Bench { tool, load, .. } => {
            let tools = client.list_all_tools().await?;
            if !tools.iter().any(|t| &t.name == tool) {
                let message =
                    format!("unknown tool {tool:?} ({})", some_of(tools.iter().map(|t| t.name.as_str())));
                return Err(status::tag(Status::NotFound, anyhow!(message)));
            }
            let (mut arguments, typed) = call_arguments;
            fit_to_schema(client, tool, &mut arguments, &typed).await;
            let mut params = mcp_types::CallToolRequestParams::new(tool);
            params.arguments = arguments.as_object().cloned();
            return bench::run(client, params, load, json).await;
        }
        ClientCommand::Call { tool, interaction, target, structured, save, detach, .. } => {
            let (mut arguments, typed) = call_arguments;
            fit_to_schema(client, tool, &mut arguments, &typed).await;
            let mut params = mcp_types::CallToolRequestParams::new(tool);
            params.arguments = arguments.as_object().cloned();
            let progress = progress::Tracker::new(progress::Style::detect(interaction.progress));
            let result = if *detach {
                match client.call_tool_or_task(&params, &progress.options(target.timeout())).await {
                    Ok(mcp_client::ToolOutcome::Task(task)) => {
                        drop(progress);
                        return crate::task::print(json, &task);
                    }
                    Ok(mcp_client::ToolOutcome::Complete(result, raw)) => Ok((result, raw)),
                    Err(e) => Err(e),
                }
            } else {
                client.call_tool_raw_with(&params, &progress.options(target.timeout())).await
            };
            drop(progress);
            let (result, raw) = match result {
                Ok(answer) => answer,
                Err(e) => return Err(unknown(client, Named::Tool(tool), e, &interaction.answers).await),
            };
            let failed = result.is_error == Some(true);
            let text = if *structured { output::call_structured } else { output::call };
            output::print_raw(json, &raw, text)?;
            if let Some(dir) = save {
                save::save(dir, save::Kind::Call, &serde_json::from_str(raw.get())?)?;
            }
            if failed {
                return Ok(Status::ToolError.exit_code());
            }
        }
        ClientCommand::Read { uri, interaction, target, save } => {
            let params = mcp_types::ReadResourceRequestParams::new(uri);
            let progress = progress::Tracker::new(progress::Style::detect(interaction.progress));
            let result =
                client.request_raw::<ReadResource>(&params, &progress.options(target.timeout())).await;
            drop(progress);
            let (_, raw) = result.map_err(|e| {
                // Not found: -32602 since 2026-07-28, -32002 before (`status::of` knows that one).
                let invalid =
                    e.error_object().is_some_and(|o| o.code == mcp_types::error::code::INVALID_PARAMS);
                if invalid {
                    status::tag(
                        Status::NotFound,
                        anyhow::Error::new(e).context(format!("no resource {uri:?}")),
                    )
                } else {
                    interactive::explain(e, &interaction.answers)
                }
            })?;
            output::print_raw(json, &raw, output::read)?;
            if let Some(dir) = save {
                save::save(dir, save::Kind::Read, &serde_json::from_str(raw.get())?)?;
            }
        }
        ClientCommand::Prompt { name, interaction, target, save, .. } => {
            let mut params = mcp_types::GetPromptRequestParams::new(name);
            params.arguments = (!prompt_arguments.is_empty()).then_some(prompt_arguments);
            let progress = progress::Tracker::new(progress::Style::detect(interaction.progress));
            let result = client.request_raw::<GetPrompt>(&params, &progress.options(target.timeout())).await;
            drop(progress);
            let (_, raw) = match result {
                Ok(answer) => answer,
                Err(e) => return Err(unknown(client, Named::Prompt(name), e, &interaction.answers).await),
            };
            output::print_raw(json, &raw, output::prompt)?;
            if let Some(dir) = save {
                save::save(dir, save::Kind::Prompt, &serde_json::from_str(raw.get())?)?;
            }
        }
        ClientCommand::Complete { prompt, resource, argument, value, context, .. } => {
            let mut params = match (prompt, resource) {
                (Some(name), _) => CompleteRequestParams::new(PromptReference::new(name), argument, value),
                (None, Some(uri)) => {
                    CompleteRequestParams::new(ResourceTemplateReference::new(uri), argument, value)
                }
                (None, None) => bail!("give --prompt NAME or --resource URI_TEMPLATE"),
            };
            if !context.is_empty() {
                let arguments =
                    split_args(context)?.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
                params.context =
                    Some(mcp_types::CompletionContext { arguments: Some(arguments), ..Default::default() });
            }
            let (_, raw) = client.request_raw::<Complete>(&params, &RequestOptions::default()).await?;
            output::print_raw(json, &raw, output::complete)?;
        }
        ClientCommand::Skill { action, uri, .. } => {
            return crate::skill::run(client, *action, uri, json).await;
        }
        ClientCommand::App { tool, save, .. } => {
            return crate::app::run(client, tool, save.as_deref(), json).await;
        }
        ClientCommand::Task { action, id, interaction, target } => {
            let progress = progress::Tracker::new(progress::Style::detect(interaction.progress));
            let options = progress.options(target.timeout());
            return crate::task::run(client, *action, id, json, options).await;
        }
        ClientCommand::Listen { tools, prompts, resources, resource, target } => {
            let asked = listen::Asked { tools: *tools, prompts: *prompts, resources: *resources, resource };
            listen::run(client, asked, json, target.log_level.level()).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The legacy revisions older than `negotiated` that the server also accepts: one connection
/// pinned to each, newest first.
async fn accepted_older(
    target: &TargetArgs,
    negotiated: mcp_types::ProtocolVersion,
) -> Vec<mcp_types::ProtocolVersion> {
    let mut accepted = Vec::new();
    for version in mcp_types::ProtocolVersion::ALL.iter().rev().copied() {
        if version.is_modern() || version >= negotiated {
            continue;
        }
        match target.connect_pinned(version).await {
            Ok(client) => {
                if client.protocol_version() == version {
                    accepted.push(version);
                }
                client.close().await;
            }
            Err(e) => tracing::debug!("{}: not accepted ({e:#})", version.as_str()),
        }
    }
    accepted
}

/// What a `call` or `prompt` named.
enum Named<'a> {
    Tool(&'a str),
    Prompt(&'a str),
}

/// The error of a `call` or `prompt`: for an invalid-params answer about a name the server does
/// not list, "no such tool" (status 5, with the names it has); otherwise as
/// [`interactive::explain`] says.
async fn unknown(
    client: &Client,
    named: Named<'_>,
    error: ClientError,
    answers: &AnswerArgs,
) -> anyhow::Error {
    let invalid = error.error_object().is_some_and(|e| e.code == mcp_types::error::code::INVALID_PARAMS);
    if !invalid {
        return interactive::explain(error, answers);
    }
    let (kind, name, names) = match named {
        Named::Tool(name) => {
            let tools = client.list_all_tools().await;
            ("tool", name, tools.map(|t| t.into_iter().map(|t| t.name).collect::<Vec<_>>()))
        }
        Named::Prompt(name) => {
            let prompts = client.list_all_prompts().await;
            ("prompt", name, prompts.map(|p| p.into_iter().map(|p| p.name).collect::<Vec<_>>()))
        }
    };
    match names {
        Ok(names) if !names.iter().any(|n| n == name) => {
            let message = format!("unknown {kind} {name:?} ({})", some_of(names.iter().map(String::as_str)));
            status::tag(Status::NotFound, anyhow::Error::new(error).context(message))
        }
        _ => interactive::explain(error, answers),
    }
}

/// "the server has: a, b, c" — at most 20 of `names`, or "the server has none".
fn some_of<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let count = names.len();
    if count == 0 {
        return "the server has none".to_owned();
    }
    let shown: Vec<&str> = names.take(20).collect();
    let more = if count > shown.len() { format!(" and {} more", count - shown.len()) } else { String::new() };
    format!("the server has: {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_only_schemas() {
        for schema in [
            json!({"type": "string"}),
            json!({"type": ["string"]}),
            json!({"enum": ["a", "b"]}),
            json!({"type": "string", "enum": ["1", "2"]}),
        ] {
            assert!(wants_string(&schema), "{schema}");
        }
        for schema in [
            json!({}),
            json!({"type": "number"}),
            json!({"type": ["string", "null"]}),
            json!({"enum": ["a", 1]}),
            json!({"type": "integer", "enum": ["1"]}),
            json!({"anyOf": [{"type": "string"}]}),
        ] {
            assert!(!wants_string(&schema), "{schema}");
        }
    }

    #[test]
    fn arg_values_that_parse_as_json_are_remembered_with_their_text() {
        let args = ["n=1.50".to_owned(), "s=plain".to_owned(), "b=true".to_owned()];
        let (value, typed) = tool_arguments(Some(r#"{"n": 0, "x": 1}"#), &args).unwrap();
        assert_eq!(value, json!({"n": 1.5, "s": "plain", "b": true, "x": 1}));
        assert_eq!(typed, [("n".to_owned(), "1.50".to_owned()), ("b".to_owned(), "true".to_owned())]);
        let repeated = ["k=1".to_owned(), "k=2".to_owned()];
        assert!(tool_arguments(None, &repeated).unwrap_err().to_string().contains("\"k\""));
    }
}
