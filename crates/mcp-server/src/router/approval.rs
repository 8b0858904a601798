//! Approval before a tool runs (`ServerConfig::approvals`): the tool's run wrapped so that it
//! first asks the caller's client with the approval form, through the same `Peer` a handler
//! asks with — so each era's rules hold (a legacy server→client request; a modern
//! `input_required` whose retry carries the answer, after which the tool runs).

use std::sync::Arc;

use mcp_types::elicitation::approval;
use mcp_types::{CallToolResult, JsonObject};

use crate::call::Call;
use crate::extract::FromCall;
use crate::handler::BoxFuture;
use crate::peer::{AskError, Peer};
use crate::tools::{ErasedTool, ToolRun};

/// The key the approval is asked under (MRTR answers are matched by key).
const KEY: &str = "dev.mcpkit/approval";

/// At most this many characters of the arguments go into the form's message.
const ARGUMENTS_SHOWN: usize = 2000;

/// The message of the approval form: the tool, where it runs, its arguments (secrets
/// redacted, long ones cut).
pub(crate) fn message(tool: &str, target: &str, arguments: &JsonObject, schema: &JsonObject) -> String {
    let shown = mcp_types::JsonValue::Object(crate::observe::redact(arguments, schema)).to_string();
    let shown = match shown.char_indices().nth(ARGUMENTS_SHOWN) {
        Some((cut, _)) => format!("{}… ({} characters in all)", &shown[..cut], shown.chars().count()),
        None => shown,
    };
    format!("Allow the tool {tool:?} on {target} to run with these arguments?\n{shown}")
}

/// `run`, asked about first.
pub(crate) fn approved_run(
    run: &ErasedTool,
    call: Call,
    tool: String,
    message: String,
) -> BoxFuture<ToolRun> {
    let run: ErasedTool = Arc::clone(run);
    Box::pin(async move {
        let peer = Peer::from_call(&call)?;
        let refused = match peer.elicit(KEY, approval::approval_form(message)).await {
            Ok(answer) if approval::approved(&answer) => return run(call).await,
            Ok(answer) => CallToolResult::error(format!(
                "The tool {tool:?} did not run: the user did not approve it ({}).",
                answer.action.as_str()
            )),
            Err(AskError::Unsupported(_)) => CallToolResult::error(format!(
                "The tool {tool:?} did not run: it needs a person's approval, and this client cannot ask \
                 (it declared no form elicitation)."
            )),
            Err(e) => CallToolResult::error(format!("The tool {tool:?} did not run: approval failed: {e}")),
        };
        Ok(refused.into())
    })
}
