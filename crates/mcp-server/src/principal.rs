//! Who made the request: the principal an authenticating transport (Streamable HTTP with
//! OAuth on) verified from the request's access token.
//!
//! The transport authenticates before any JSON-RPC processing and hands the principal to the
//! router with the request ([`Server::handle_request_as`](crate::Server::handle_request_as));
//! handlers read it with the [`Principal`] extractor (its `FromCall` is in `extract`, with the others) (auth required) or `Option<Principal>`
//! (auth optional). The access token itself is not part of it unless the transport was told to
//! keep it (mcp-http's `AuthConfig::keep_tokens`), for the one program that needs it: a gateway
//! whose upstream is configured to receive the caller's own token (passthrough) or one exchanged
//! for it (RFC 8693). A server must not otherwise pass the client's token on to anything else.

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
    /// The access token itself, kept only when the transport was configured to keep it.
    token: Option<AccessToken>,
}

/// An access token as the caller presented it. Its `Debug` never shows the value; read it with
/// [`AccessToken::secret`] only to send it where it is meant to go.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    value: Arc<str>,
    bound: bool,
}

impl AccessToken {
    /// A bearer token (`bound` false) or a DPoP-bound one (`bound` true: useless without the
    /// caller's key, so never to be passed on).
    pub fn new(value: impl Into<Arc<str>>, bound: bool) -> Self {
        AccessToken { value: value.into(), bound }
    }

    /// The token's value. Sensitive: never log it.
    pub fn secret(&self) -> &str {
        &self.value
    }

    /// Whether the token is bound to the caller's key (DPoP, RFC 9449).
    pub fn is_bound(&self) -> bool {
        self.bound
    }
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessToken(***)")
    }
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

    /// The same principal holding the token it was verified from (see [`Principal::access_token`]).
    pub fn with_access_token(mut self, token: AccessToken) -> Self {
        self.token = Some(token);
        self
    }

    /// The access token the request carried, when the transport was configured to keep it
    /// (mcp-http: `AuthConfig::keep_tokens`); `None` otherwise, and always over stdio.
    pub fn access_token(&self) -> Option<&AccessToken> {
        self.token.as_ref()
    }

    /// The token's audiences (`aud`, a string or an array of strings).
    pub fn audiences(&self) -> Vec<&str> {
        match self.claims.get("aud") {
            Some(mcp_types::JsonValue::String(one)) => vec![one.as_str()],
            Some(mcp_types::JsonValue::Array(many)) => many.iter().filter_map(|a| a.as_str()).collect(),
            _ => Vec::new(),
        }
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
    fn the_token_is_kept_only_when_given_and_never_shown() {
        let p = Principal::new(None, Some("alice".into()), None);
        assert!(p.access_token().is_none());
        let p = p.with_access_token(super::AccessToken::new("s3cr3t", false));
        assert_eq!(p.access_token().map(|t| t.secret()), Some("s3cr3t"));
        assert!(!format!("{p:?}").contains("s3cr3t"), "{p:?}");
        let mut claims = mcp_types::JsonObject::new();
        claims.insert("aud".into(), json!(["https://a", "https://b", 3]));
        assert_eq!(p.clone().with_claims(claims).audiences(), ["https://a", "https://b"]);
        let mut claims = mcp_types::JsonObject::new();
        claims.insert("aud".into(), json!("https://a"));
        assert_eq!(p.with_claims(claims).audiences(), ["https://a"]);
    }

    #[test]
    fn scopes_are_checked_as_a_set() {
        let p = Principal::default().with_scopes(["read", "write"]);
        assert!(p.has_scopes(&["write", "read"]));
        assert!(p.has_scopes::<&str>(&[]));
        assert!(!p.has_scopes(&["admin"]));
    }
}
