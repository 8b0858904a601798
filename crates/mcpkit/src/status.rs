//! The exit statuses of the client commands, one per kind of failure, so that a script can
//! tell them apart (retry only when the server could not be reached, say). README.md's
//! "exit statuses" table and `mcpkit --help` list them.

use std::fmt;
use std::process::ExitCode;

use mcp_client::ClientError;
use mcp_types::error::code;

/// Why a client command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// 1: the tool ran and reported an error (`isError: true`).
    ToolError = 1,
    /// 2: the command line or the configuration is wrong; nothing was asked of a server.
    Usage = 2,
    /// 3: the server could not be started or reached, the connection was lost, or an answer
    /// did not come in time: trying again may help.
    Connection = 3,
    /// 4: the server answered with an error, or with something that is not a valid answer, or
    /// does not offer what was asked.
    Protocol = 4,
    /// 5: the server has no tool, prompt or resource of that name.
    NotFound = 5,
}

impl Status {
    pub(crate) fn exit_code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }
}

/// Runs `work` on a runtime of its own: its exit status, or its error on one line (`who: …`)
/// with the error's status. A blocking read still going on (stdin) is not waited for.
pub(crate) fn block_on(
    who: &str,
    work: impl std::future::Future<Output = anyhow::Result<ExitCode>>,
) -> ExitCode {
    let result = match tokio::runtime::Runtime::new() {
        Ok(runtime) => {
            let result = runtime.block_on(work);
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            result
        }
        Err(e) => Err(tag(Status::Usage, anyhow::Error::new(e))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{who}: {}", crate::client::one_line(&e));
            of(&e).exit_code()
        }
    }
}

/// An error that carries the status it ends the command with. It displays as its cause.
#[derive(Debug)]
struct Tagged {
    status: Status,
    error: anyhow::Error,
}

impl fmt::Display for Tagged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for Tagged {}

/// `error`, ending the command with `status` whatever it wraps.
pub(crate) fn tag(status: Status, error: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(Tagged { status, error })
}

/// The status `error` ends the command with: the one it was tagged with, else the kind of the
/// [`ClientError`] in it, else [`Status::Usage`] (mcpkit refused before asking a server).
pub(crate) fn of(error: &anyhow::Error) -> Status {
    for cause in error.chain() {
        if let Some(tagged) = cause.downcast_ref::<Tagged>() {
            return tagged.status;
        }
        if let Some(client) = cause.downcast_ref::<ClientError>() {
            return of_client(client);
        }
        // Authorization's own requests (discovery, registration, the token endpoint).
        if let Some(auth) = cause.downcast_ref::<mcp_client::auth::AuthError>() {
            return match auth {
                mcp_client::auth::AuthError::Http(_) | mcp_client::auth::AuthError::Discovery(_) => {
                    Status::Connection
                }
                mcp_client::auth::AuthError::Config(_) | mcp_client::auth::AuthError::Store(_) => {
                    Status::Usage
                }
                _ => Status::Protocol,
            };
        }
    }
    Status::Usage
}

fn of_client(error: &ClientError) -> Status {
    match error {
        ClientError::Transport { .. } | ClientError::Timeout(_) | ClientError::Closed => Status::Connection,
        ClientError::Protocol(e) if e.code == code::RESOURCE_NOT_FOUND => Status::NotFound,
        ClientError::InvalidConfig(_) => Status::Usage,
        _ => Status::Protocol,
    }
}

#[cfg(test)]
mod tests {
    use mcp_client::transport::TransportError;
    use mcp_types::ErrorObject;

    use super::*;

    #[test]
    fn each_failure_has_its_status() {
        let lost = ClientError::Transport {
            error: TransportError::NotSent("gone".into()),
            outcome: mcp_client::Outcome::NotExecuted,
        };
        let cases = [
            (anyhow::Error::new(lost).context("calling"), Status::Connection),
            (anyhow::Error::new(ClientError::Timeout(std::time::Duration::from_secs(1))), Status::Connection),
            (anyhow::Error::new(ClientError::Protocol(ErrorObject::invalid_params("bad"))), Status::Protocol),
            (
                anyhow::Error::new(ClientError::Protocol(ErrorObject::new(code::RESOURCE_NOT_FOUND, "no"))),
                Status::NotFound,
            ),
            (anyhow::Error::new(ClientError::Unsupported("x".into())), Status::Protocol),
            (anyhow::anyhow!("invalid --arg"), Status::Usage),
            (tag(Status::NotFound, anyhow::anyhow!("unknown tool")).context("call"), Status::NotFound),
            (
                tag(
                    Status::Connection,
                    anyhow::Error::new(ClientError::Protocol(ErrorObject::internal("x"))),
                ),
                Status::Connection,
            ),
        ];
        for (error, status) in cases {
            assert_eq!(of(&error), status, "{error:#}");
        }
        // A tag changes nothing of the message.
        let tagged = tag(Status::Connection, anyhow::anyhow!("refused").context("cannot connect to x"));
        assert_eq!(format!("{:#}", tagged.context("outer")), "outer: cannot connect to x: refused");
    }
}
