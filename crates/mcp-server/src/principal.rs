//! Who made the request: the principal an authenticating transport (Streamable HTTP with
//! OAuth on) verified from the request's access token.
//!
//! The transport authenticates before any JSON-RPC processing and hands the principal to the
//! router with the request ([`Server::handle_request_as`](crate::Server::handle_request_as));
//! handlers read it with the [`Principal`] extractor (its `FromCall` is in `extract`, with the others) (auth required) or `Option<Principal>`
//! (auth optional). The access token itself is never part of it: a server must not pass the
//! client's token through to anything else.

use std::sync::Arc;

use mcp_types::JsonObject;

/// The authenticated caller of a request, as its access token describes it.
///
/// As an extractor, `Principal` fails (a JSON-RPC internal error, `-32603`, naming the
/// cause) when the request was not authenticated — a server whose handlers need a principal
/// must turn authorization on in its transport; stdio never authenticates. Use
/// `Option<Principal>` for handlers that serve both.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The token's issuer (`iss`), when it names one.
    pub issuer: Option<String>,
    /// The subject (`sub`): the user, or the client acting on its own behalf.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The key the token is bound to (`cnf.jkt`, RFC 9449), when it is DPoP-bound.
    pub jkt: Option<String>,
    /// Every claim of the token (a JWT's payload, or the introspection response), for
    /// application-specific checks. Never the token itself.
    pub claims: JsonObject,
}

impl Principal {
    /// A principal with these identifiers and no scopes or claims.
    pub fn new(issuer: Option<String>, subject: Option<String>, client_id: Option<String>) -> Self {
        Principal { issuer, subject, client_id, ..Principal::default() }
    }

    /// The same principal with these scopes.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The same principal with these claims.
    pub fn with_claims(mut self, claims: JsonObject) -> Self {
        self.claims = claims;
        self
    }

    /// True when every scope of `required` was granted.
    pub fn has_scopes<S: AsRef<str>>(&self, required: &[S]) -> bool {
        required.iter().all(|r| self.scopes.iter().any(|s| s == r.as_ref()))
    }

    /// A claim by name.
    pub fn claim(&self, name: &str) -> Option<&mcp_types::JsonValue> {
        self.claims.get(name)
    }
}

/// A shared principal, as the router carries it.
pub(crate) type SharedPrincipal = Option<Arc<Principal>>;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mcp_types::{DecodeOptions, Message};
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::Principal;
    use crate::{Connection, NullSink, Server, Tools};

    async fn who(principal: Principal) -> String {
        format!("{} {}", principal.subject.unwrap_or_default(), principal.scopes.join(","))
    }

    async fn maybe(principal: Option<Principal>) -> String {
        principal.and_then(|p| p.subject).unwrap_or_else(|| "anonymous".to_owned())
    }

    async fn call(server: &Server, tool: &str, principal: Option<Principal>) -> serde_json::Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "name": tool, "arguments": {}}});
        let options = DecodeOptions::new().with_accept_responses(false);
        let Ok(Message::Request(request)) = mcp_types::decode_message(body.to_string().as_bytes(), options)
        else {
            panic!("not a request")
        };
        let connection = Connection::new(Arc::new(NullSink));
        let sink = connection.sink.clone();
        let reply = server
            .handle_request_as(&connection, request, CancellationToken::new(), sink, principal.map(Arc::new))
            .await
            .expect("a reply");
        serde_json::to_value(Message::Response(reply.response)).unwrap()
    }

    #[tokio::test]
    async fn handlers_see_the_principal_the_transport_hands_over() {
        let server = Server::builder("p", "1")
            .tools(Tools::new().add("who", "Who", who).add("maybe", "Maybe", maybe))
            .build()
            .unwrap();
        let alice =
            Principal::new(Some("https://as".into()), Some("alice".into()), None).with_scopes(["a", "b"]);
        let r = call(&server, "who", Some(alice.clone())).await;
        assert_eq!(r["result"]["content"][0]["text"], "alice a,b");
        let r = call(&server, "maybe", Some(alice)).await;
        assert_eq!(r["result"]["content"][0]["text"], "alice");
        let r = call(&server, "maybe", None).await;
        assert_eq!(r["result"]["content"][0]["text"], "anonymous");
        // Without authentication, `Principal` fails with an error that says why.
        let r = call(&server, "who", None).await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("authenticated"), "{r}");
    }

    #[test]
    fn scopes_are_checked_as_a_set() {
        let p = Principal::default().with_scopes(["read", "write"]);
        assert!(p.has_scopes(&["write", "read"]));
        assert!(p.has_scopes::<&str>(&[]));
        assert!(!p.has_scopes(&["admin"]));
    }
}
