//! `mcp`: a Model Context Protocol server over stdio for other agents and editors.

use rmcp::ServiceExt;

use super::context::Context;
use crate::error::{Error, ExitStatus, Result};
use crate::mcp::{protocol_stdout, BoardServer};
use crate::workflow::runner;

pub fn run(context: &Context) -> Result<ExitStatus> {
    // The project is looked for now, so a wrong folder fails before a client connects.
    let project = context.project()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))?;
    let served = runtime.block_on(async {
        // Ctrl-C and SIGTERM end the session, also after a run_story has installed its own
        // handlers (which would otherwise leave the signals without effect).
        let stop = runner::interrupted();
        let output = protocol_stdout()?;
        let server = BoardServer::new(project.root.clone());
        let session = async {
            let service = server
                .serve((tokio::io::stdin(), output))
                .await
                .map_err(|e| {
                    Error::Other(format!("mcp: the client did not start a session: {e}"))
                })?;
            service
                .waiting()
                .await
                .map_err(|e| Error::Other(format!("mcp: the session ended badly: {e}")))?;
            Ok::<_, Error>(())
        };
        tokio::select! {
            ended = session => ended?,
            _ = stop => {}
        }
        Ok::<_, Error>(())
    });
    // A run started by a tool may leave blocking work behind; the session is over either way.
    runtime.shutdown_background();
    served.map(|()| ExitStatus::Success)
}
