//! `serve [--host 127.0.0.1] [--port 7420] [--token T]`: the board as a live web page.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use clap::Args;

use super::context::Context;
use crate::error::{Error, ExitStatus, Result};
use crate::serve::Listener;
use crate::workflow::runner;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on: an IP address or `localhost`. Anything but a loopback
    /// address needs --token.
    #[arg(long, default_value = "127.0.0.1", value_name = "HOST")]
    pub host: String,
    /// The port to listen on; 0 lets the system pick a free one (the address is printed).
    #[arg(long, default_value_t = 7420, value_name = "PORT")]
    pub port: u16,
    /// A secret every request must carry: open the page once with `?token=<T>` (a cookie keeps
    /// it), or send `Authorization: Bearer <T>`.
    #[arg(
        long,
        value_name = "T",
        env = "AGENTIC_SDLC_SERVE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
}

/// The shortest `--token` taken.
const MIN_TOKEN_LEN: usize = 8;

/// `serve --json`: where the page is.
#[derive(Serialize)]
struct Serving<'a> {
    url: &'a str,
    host: String,
    port: u16,
    board: std::path::PathBuf,
}

pub fn run(args: ServeArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let ip: IpAddr = match args.host.trim() {
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        host => host.parse().map_err(|_| {
            Error::Usage(format!(
                "--host {host}: not an IP address; use one of this machine's addresses, 127.0.0.1 or 0.0.0.0"
            ))
        })?,
    };
    // A token of blanks, or so short it can be guessed, guards nothing (docs/design.md §22).
    if let Some(token) = &args.token {
        if token.trim().chars().count() < MIN_TOKEN_LEN || token.chars().any(char::is_control) {
            return Err(Error::Usage(format!(
                "--token: a token must be at least {MIN_TOKEN_LEN} characters besides blanks, with no control characters (for example `openssl rand -hex 16`)"
            )));
        }
    }
    let token = args.token;
    if !ip.is_loopback() && token.is_none() {
        return Err(Error::Usage(format!(
            "--host {ip} makes the board reachable from other machines; it needs --token <secret> as well"
        )));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))?;
    let printer = &context.printer;
    runtime.block_on(async {
        // Ctrl-C is heard from before the address is printed: whoever reads it may stop us.
        let interrupted = runner::interrupted();
        let stop = async {
            interrupted.await;
        };
        let listener = Listener::bind(SocketAddr::new(ip, args.port)).await?;
        let address = listener.address();
        let url = format!("http://{address}/");
        printer.json_line(&crate::front::envelope(
            "serving",
            Serving {
                url: &url,
                host: address.ip().to_string(),
                port: address.port(),
                board: project.board_dir(),
            },
        ));
        let shown = match &token {
            Some(_) => format!("{url}?token=<your token>"),
            None => url,
        };
        printer.info(format!(
            "Serving the board of {} at {shown} (Ctrl-C stops)",
            project.root.display()
        ));
        listener.serve(project, token, stop).await
    })?;
    // Stopping the server is the way it ends; that is not an interruption of any work.
    Ok(ExitStatus::Success)
}
