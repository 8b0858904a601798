//! The credentials of a request the gateway makes for a caller, when its upstream is to see
//! who the caller is (`credentials = "passthrough"` or `"token-exchange"`).
//!
//! MCP forbids a server to pass its client's token on by default: the gateway does so only
//! when configured to, and then only when the token names the upstream among its audiences
//! (so a token a user gave the gateway cannot be replayed at a service it was not meant for).
//! A DPoP-bound token is never passed on (it is useless without the caller's key). A token
//! exchange (RFC 8693) lets the authorization server issue a token for the upstream alone.

use std::sync::Arc;

use mcp_client::auth::{AuthError, TokenExchange};
use mcp_client::transport::Credential;
use mcp_server::Principal;
use mcp_types::ErrorObject;

use crate::config::{Credentials, UpstreamConfig};

/// How one upstream's requests for a caller are authorized.
pub(crate) enum CallerCredentials {
    /// The caller's own token, when it names `audience`.
    Passthrough { audience: String },
    /// A token exchanged for the caller's.
    Exchange(Box<TokenExchange>),
    /// The configuration cannot work (an unusable token endpoint): every request made for a
    /// caller fails, saying why.
    Broken(String),
}

impl CallerCredentials {
    /// What `config` asks for; `None`: the gateway's own credentials only.
    pub(crate) fn of(config: &UpstreamConfig) -> Option<Arc<CallerCredentials>> {
        let credentials = match &config.credentials {
            Credentials::Gateway | Credentials::None => return None,
            Credentials::Passthrough { audience } => {
                CallerCredentials::Passthrough { audience: audience.clone() }
            }
            Credentials::TokenExchange(x) => match TokenExchange::new(&x.token_endpoint, x.client_id.clone())
            {
                Ok(mut exchange) => {
                    exchange = exchange.resource(x.resource.clone());
                    if let Some(secret) = &x.client_secret {
                        exchange = exchange.client_secret(secret.clone());
                    }
                    if let Some(audience) = &x.audience {
                        exchange = exchange.audience(audience.clone());
                    }
                    if let Some(scope) = &x.scope {
                        exchange = exchange.scope(scope.clone());
                    }
                    CallerCredentials::Exchange(Box::new(exchange))
                }
                Err(e) => CallerCredentials::Broken(format!("its token exchange cannot work: {e}")),
            },
        };
        Some(Arc::new(credentials))
    }

    /// The `Authorization` of a request made for `principal` to the upstream `upstream`; an
    /// error (the request not sent) that says why there is none. Errors never contain a token.
    pub(crate) async fn for_caller(
        &self,
        upstream: &str,
        principal: Option<&Principal>,
    ) -> Result<Credential, ErrorObject> {
        let refuse = |why: String| {
            ErrorObject::internal(format!("upstream {upstream}: {why}"))
                .with_data(serde_json::json!({"upstream": upstream, "outcome": "not executed"}))
        };
        if let CallerCredentials::Broken(why) = self {
            return Err(refuse(why.clone()));
        }
        let Some(token) = principal.and_then(Principal::access_token) else {
            return Err(refuse(
                "it acts with the caller's own credentials and this request carries no access token \
                 (the gateway's clients must be authorized: --auth-issuer)"
                    .to_owned(),
            ));
        };
        match self {
            CallerCredentials::Passthrough { audience } => {
                if token.is_bound() {
                    return Err(refuse(
                        "the caller's token is DPoP-bound: it cannot be passed on (use token-exchange)"
                            .to_owned(),
                    ));
                }
                let audiences = principal.map(Principal::audiences).unwrap_or_default();
                if !audiences.iter().any(|a| same_audience(a, audience)) {
                    return Err(refuse(format!(
                        "the caller's token is not meant for it (its audience does not name {audience:?}); \
                         it is not passed on"
                    )));
                }
                Ok(Credential::bearer(token.secret()))
            }
            CallerCredentials::Exchange(exchange) => match exchange.exchange(token.secret()).await {
                Ok(exchanged) => Ok(Credential::bearer(&exchanged)),
                Err(AuthError::Token { error, description }) => Err(refuse(format!(
                    "the token exchange was refused: {error}{}",
                    description.map(|d| format!(" ({d})")).unwrap_or_default()
                ))),
                Err(e) => Err(refuse(format!("the token exchange failed: {e}"))),
            },
            CallerCredentials::Broken(_) => unreachable!("answered above"),
        }
    }
}

/// Audiences compared as the authorization server wrote them, a trailing `/` aside.
fn same_audience(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use mcp_server::AccessToken;
    use serde_json::json;

    use super::*;

    fn caller(aud: serde_json::Value, bound: bool) -> Principal {
        let mut claims = mcp_types::JsonObject::new();
        claims.insert("aud".into(), aud);
        Principal::new(None, Some("alice".into()), None)
            .with_claims(claims)
            .with_access_token(AccessToken::new("tok-en", bound))
    }

    #[tokio::test]
    async fn passthrough_only_to_the_audience_the_token_names() {
        let pass = CallerCredentials::Passthrough { audience: "https://up.example/mcp".into() };
        let ok = caller(json!(["https://gw.example/mcp", "https://up.example/mcp/"]), false);
        assert_eq!(pass.for_caller("up", Some(&ok)).await.unwrap().value(), "Bearer tok-en");

        let other = caller(json!("https://gw.example/mcp"), false);
        let e = pass.for_caller("up", Some(&other)).await.unwrap_err();
        assert!(e.message.contains("not meant for it"), "{}", e.message);
        assert!(!e.message.contains("tok-en"));
        assert_eq!(e.data.as_ref().unwrap()["outcome"], "not executed");

        let bound = caller(json!("https://up.example/mcp"), true);
        let e = pass.for_caller("up", Some(&bound)).await.unwrap_err();
        assert!(e.message.contains("DPoP-bound"), "{}", e.message);

        let e = pass.for_caller("up", None).await.unwrap_err();
        assert!(e.message.contains("no access token"), "{}", e.message);
        let tokenless = Principal::new(None, Some("alice".into()), None);
        assert!(pass.for_caller("up", Some(&tokenless)).await.is_err());
    }

    #[tokio::test]
    async fn a_broken_exchange_says_why_for_every_caller() {
        let mut config = UpstreamConfig::new(
            "up",
            crate::config::Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: Default::default(),
            },
        );
        config.credentials = Credentials::TokenExchange(crate::config::Exchange {
            token_endpoint: "http://as.example.com/token".into(),
            client_id: "gw".into(),
            client_secret: None,
            resource: "http://127.0.0.1:1/mcp".into(),
            audience: None,
            scope: None,
        });
        let credentials = CallerCredentials::of(&config).expect("per caller");
        let ok = caller(json!("x"), false);
        let e = credentials.for_caller("up", Some(&ok)).await.unwrap_err();
        assert!(e.message.contains("token exchange cannot work"), "{}", e.message);
        config.credentials = Credentials::Gateway;
        assert!(CallerCredentials::of(&config).is_none());
    }
}
