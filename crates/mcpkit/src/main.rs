//! `mcpkit`: the command line of the mcpkit MCP implementation.
//!
//! For now it inspects MCP traffic: `mcpkit check` reads newline-delimited JSON-RPC (a stdio
//! transcript) and reports, line by line, what each message is or exactly what is wrong with
//! it — the same framing and envelope rules an mcpkit server applies. Serving and talking to
//! servers arrive with the server and client crates.

mod check;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check::run(args),
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
