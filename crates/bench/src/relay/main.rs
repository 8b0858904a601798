//! `mcp-relay`: the floor under any HTTP gateway's cost, for `scripts/bench-gateway.sh`.
//!
//! It accepts TCP connections and, for each, opens one connection to the upstream and copies
//! bytes both ways until either side closes — no HTTP parsing, no JSON, no protocol. A gateway
//! that makes one upstream HTTP/1.1 exchange per call makes at least the system calls this
//! relay makes (a read and a write on each side), so what the relay costs a call is what
//! forwarding costs before any work of the gateway's own. Both connections of a pair are
//! driven by one task, and the runtime has one thread unless `--threads` says otherwise, so a
//! call wakes nothing but the task its bytes arrive for.
//!
//! ```text
//! mcp-relay --listen 127.0.0.1:8081 --upstream 127.0.0.1:8080
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use tokio::net::{TcpListener, TcpStream};

#[derive(Parser, Debug)]
#[command(name = "mcp-relay", about = "Relay TCP connections to one upstream, byte for byte")]
struct Cli {
    /// Where to listen.
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,
    /// Where each accepted connection is relayed to.
    #[arg(long, value_name = "ADDR")]
    upstream: SocketAddr,
    /// Worker threads (1: a current-thread runtime).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    threads: u16,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = if cli.threads == 1 {
        tokio::runtime::Builder::new_current_thread().enable_io().build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(cli.threads))
            .enable_io()
            .build()
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(relay(cli.listen, cli.upstream)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn relay(listen: SocketAddr, upstream: SocketAddr) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (downstream, _) = listener.accept().await?;
        tokio::spawn(async move {
            if let Err(error) = pair(downstream, upstream).await {
                eprintln!("relay: {error}");
            }
        });
    }
}

async fn pair(mut downstream: TcpStream, upstream: SocketAddr) -> std::io::Result<()> {
    downstream.set_nodelay(true)?;
    let mut upstream = TcpStream::connect(upstream).await?;
    upstream.set_nodelay(true)?;
    tokio::io::copy_bidirectional(&mut downstream, &mut upstream).await?;
    Ok(())
}
