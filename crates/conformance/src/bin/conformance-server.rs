//! `conformance-server`: the MCP conformance fixtures, served over stdio.
//!
//! ```text
//! conformance-server --stdio          serve stdin/stdout (logs go to stderr; RUST_LOG, default warn)
//! conformance-server --http ADDR      Streamable HTTP at http://ADDR/mcp (port 0: a free port,
//!                                     printed on stderr as `listening on http://…/mcp`)
//! ```

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

#[derive(Parser)]
#[command(name = "conformance-server", version, about = "The MCP conformance fixtures, as a server")]
#[command(group = clap::ArgGroup::new("transport").required(true).args(["stdio", "http"]))]
struct Cli {
    /// Serve newline-delimited JSON-RPC on stdin/stdout until stdin ends.
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP at this address (host:port).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("conformance-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match cli.http {
        Some(addr) => runtime.block_on(serve_http(&addr)),
        None => runtime.block_on(serve_stdio()),
    };
    // Reading stdin happens on a blocking thread that may still be parked in `read` (after
    // Ctrl-C, say); do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    code
}

/// Logs go to stderr only: stdout carries the protocol.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}

async fn serve_stdio() -> ExitCode {
    let server = match conformance::try_server() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("conformance-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    tokio::select! {
        served = server.serve_stdio() => match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!(error = %e, "serving stdio failed");
                ExitCode::FAILURE
            }
        },
        _ = tokio::signal::ctrl_c() => {
            tracing::info!("interrupted");
            ExitCode::from(130)
        }
    }
}

async fn serve_http(addr: &str) -> ExitCode {
    let addr: std::net::SocketAddr = match addr.parse() {
        Ok(addr) => addr,
        Err(e) => {
            eprintln!("conformance-server: invalid address {addr:?}: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match conformance::try_server() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("conformance-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bound = match mcp_http::bind(addr).await {
        Ok(bound) => bound,
        Err(e) => {
            eprintln!("conformance-server: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("listening on http://{}/mcp", bound.local_addr());
    tokio::select! {
        served = mcp_http::serve(server, bound, None) => match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("conformance-server: {e}");
                ExitCode::FAILURE
            }
        },
        _ = tokio::signal::ctrl_c() => ExitCode::from(130),
    }
}
