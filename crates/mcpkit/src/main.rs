//! `mcpkit`: the command line of the mcpkit MCP implementation.
//!
//! `mcpkit serve` runs a demonstration server for people trying MCP clients. `mcpkit check`
//! reads newline-delimited JSON-RPC (a stdio transcript) and reports, line by line, what each
//! message is or exactly what is wrong with it — the same framing and envelope rules an mcpkit
//! server applies. `info`, `list`, `call`, `read`, `prompt`, `complete` and `listen` talk to any
//! MCP server (`--url`, a command line after `--`, or `--server NAME` from an `mcpServers` config).

mod auth;
mod check;
mod client;
mod demo;
mod output;
mod target;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcp_types::ProtocolVersion;

#[derive(Parser)]
#[command(name = "mcpkit", version, about = "The Model Context Protocol, from the shell")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check newline-delimited JSON-RPC from stdin (or a file) as an MCP stdio peer would.
    ///
    /// Prints one JSON object per input message: its kind, method and id, or the JSON-RPC
    /// error a server would answer with. Exits 1 when any message is malformed.
    #[command(
        after_help = "Example:\n  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' | mcpkit check"
    )]
    Check(check::Args),
    /// List the protocol revisions mcpkit knows, newest first, with their era.
    Versions,
    /// Run the demonstration server (tools, resources, prompts that show what MCP can do).
    #[command(
        after_help = "Examples:\n  mcpkit serve --stdio   # then point an MCP client at this command\n  mcpkit serve --http 127.0.0.1:8080 --auth-issuer https://auth.example.com --auth-scope mcp:basic"
    )]
    Serve(ServeArgs),
    #[command(flatten)]
    Client(client::ClientCommand),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Serve over stdin/stdout (the default).
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve Streamable HTTP on this address.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    #[command(flatten)]
    auth: auth::AuthArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Check(args) => check::run(args),
        Command::Client(command) => client::run(command),
        Command::Versions => {
            for v in ProtocolVersion::ALL.iter().rev() {
                let era = if v.is_modern() { "modern" } else { "legacy" };
                let batches = if v.allows_batches() { " (batches)" } else { "" };
                println!("{v}  {era}{batches}");
            }
            ExitCode::SUCCESS
        }
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    // Logs go to stderr only: on stdio, stdout carries nothing but MCP messages.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let server = match demo::server() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(addr) = args.http {
        let addr: std::net::SocketAddr = match addr.parse() {
            Ok(addr) => addr,
            Err(e) => {
                eprintln!("mcpkit: invalid address {addr:?}: {e}");
                return ExitCode::from(2);
            }
        };
        return runtime.block_on(async move {
            let bound = match mcp_http::bind(addr).await {
                Ok(bound) => bound,
                Err(e) => {
                    eprintln!("mcpkit: cannot listen on {addr}: {e}");
                    return ExitCode::from(2);
                }
            };
            let config = match args.auth.http_config(bound.local_addr()) {
                Ok(config) => config,
                Err(e) => {
                    eprintln!("mcpkit: {e}");
                    return ExitCode::from(2);
                }
            };
            eprintln!("listening on http://{}/mcp", bound.local_addr());
            if let Some(auth) = &config.auth {
                eprintln!(
                    "authorization: tokens from {} for {} (metadata at {})",
                    auth.issuers().join(", "),
                    auth.resource(),
                    auth.resource_metadata_url()
                );
            }
            match mcp_http::serve(server, bound, Some(config)).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcpkit: {e}");
                    ExitCode::from(2)
                }
            }
        });
    }
    match runtime.block_on(server.serve_stdio()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            ExitCode::from(2)
        }
    }
}
