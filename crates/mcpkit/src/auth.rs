//! `mcpkit serve --http` as an OAuth 2.1 resource server: the `--auth-*` options.

use std::net::SocketAddr;

use mcp_http::{AuthConfig, DpopConfig, HttpConfig, Introspection, JwtValidation};

/// The environment variable holding the introspection client's secret (never a flag: flags show
/// up in process listings).
pub(crate) const SECRET_ENV: &str = "MCPKIT_AUTH_CLIENT_SECRET";

#[derive(clap::Args, Debug, Default)]
pub(crate) struct AuthArgs {
    /// Require OAuth access tokens issued by this authorization server (its issuer URL);
    /// repeatable. Turns authorization on: every MCP request needs a valid token, and the
    /// Protected Resource Metadata is served at /.well-known/oauth-protected-resource.
    #[arg(long = "auth-issuer", value_name = "URL", requires = "http")]
    pub(crate) issuer: Vec<String>,
    /// The canonical URL of this server, as clients reach it (default: http://ADDR/mcp).
    #[arg(long = "auth-resource", value_name = "URL", requires = "issuer")]
    pub(crate) resource: Option<String>,
    /// An accepted token audience; repeatable (default: the resource URL).
    #[arg(long = "auth-audience", value_name = "URL", requires = "issuer")]
    pub(crate) audience: Vec<String>,
    /// Where the issuer's signing keys are (default: the jwks_uri of its metadata).
    #[arg(long = "auth-jwks-uri", value_name = "URL", requires = "issuer", conflicts_with = "introspection")]
    pub(crate) jwks_uri: Option<String>,
    /// Validate opaque tokens at this introspection endpoint (RFC 7662) instead of as JWTs;
    /// the client secret is read from the MCPKIT_AUTH_CLIENT_SECRET environment variable.
    #[arg(long = "auth-introspection", value_name = "URL", requires_all = ["issuer", "client_id"])]
    pub(crate) introspection: Option<String>,
    /// This server's client id at the authorization server, for introspection.
    #[arg(long = "auth-client-id", value_name = "ID", requires = "introspection")]
    pub(crate) client_id: Option<String>,
    /// A scope every request needs; repeatable.
    #[arg(long = "auth-scope", value_name = "SCOPE", requires = "issuer")]
    pub(crate) scope: Vec<String>,
    /// Accept DPoP-bound tokens (RFC 9449).
    #[arg(long = "auth-dpop", requires = "issuer")]
    pub(crate) dpop: bool,
}

impl AuthArgs {
    /// The transport settings for a server bound to `addr`, with authorization when asked for.
    pub(crate) fn http_config(&self, addr: SocketAddr) -> Result<HttpConfig, String> {
        let mut config = HttpConfig::for_bind(addr);
        if self.issuer.is_empty() {
            return Ok(config);
        }
        let resource = self.resource.clone().unwrap_or_else(|| format!("http://{addr}/mcp"));
        let mut builder = AuthConfig::builder(resource.clone()).required_scopes(self.scope.clone());
        for issuer in &self.issuer {
            builder = builder.issuer(issuer.clone());
        }
        for audience in &self.audience {
            builder = builder.audience(audience.clone());
        }
        builder = match &self.introspection {
            Some(endpoint) => {
                let secret = std::env::var(SECRET_ENV)
                    .map_err(|_| format!("--auth-introspection needs the client secret in {SECRET_ENV}"))?;
                let client_id = self.client_id.clone().unwrap_or_default();
                builder.introspection(Introspection::new(endpoint.clone(), client_id, secret))
            }
            None => {
                let jwt = JwtValidation::default();
                builder.jwt(match &self.jwks_uri {
                    Some(uri) => jwt.jwks_uri(uri.clone()),
                    None => jwt,
                })
            }
        };
        if self.dpop {
            builder = builder.dpop(DpopConfig::default());
        }
        let auth = builder.build().map_err(|e| format!("invalid authorization settings: {e}"))?;
        // Clients reach the server by the resource URL's host: accept it besides the loopback names.
        if let Ok((hosts, origin)) = url_authority(&resource) {
            for host in hosts {
                if !config.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
                    config.allowed_hosts.push(host);
                }
            }
            if !config.allowed_origins.iter().any(|o| o.eq_ignore_ascii_case(&origin)) {
                config.allowed_origins.push(origin);
            }
        }
        config.auth = Some(auth);
        Ok(config)
    }
}

/// The `Host` values an absolute http(s) URL is reached by (with and without a default port),
/// and its origin.
fn url_authority(url: &str) -> Result<(Vec<String>, String), ()> {
    let (scheme, rest) = url.split_once("://").ok_or(())?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or("");
    if authority.is_empty() {
        return Err(());
    }
    let explicit_port = !authority.ends_with(']')
        && authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let hosts = if explicit_port {
        vec![authority.to_owned()]
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") { 443 } else { 80 };
        vec![authority.to_owned(), format!("{authority}:{port}")]
    };
    Ok((hosts, format!("{}://{authority}", scheme.to_ascii_lowercase())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_without_an_issuer() {
        let config = AuthArgs::default().http_config("127.0.0.1:8080".parse().unwrap()).unwrap();
        assert!(config.auth.is_none());
    }

    #[test]
    fn on_with_an_issuer() {
        let args = AuthArgs {
            issuer: vec!["https://as.example.com".into()],
            scope: vec!["mcp:basic".into()],
            dpop: true,
            ..AuthArgs::default()
        };
        let config = args.http_config("127.0.0.1:8080".parse().unwrap()).unwrap();
        let auth = config.auth.unwrap();
        assert_eq!(auth.resource(), "http://127.0.0.1:8080/mcp");
        assert_eq!(auth.audiences(), ["http://127.0.0.1:8080/mcp"]);
        assert_eq!(auth.required_scopes(), ["mcp:basic"]);
        assert!(auth.dpop().is_some());
        let public = AuthArgs {
            issuer: vec!["https://as.example.com".into()],
            resource: Some("https://mcp.example.com/mcp".into()),
            ..AuthArgs::default()
        };
        let config = public.http_config("0.0.0.0:8080".parse().unwrap()).unwrap();
        assert!(config.allowed_hosts.contains(&"mcp.example.com".to_owned()));
        assert!(config.allowed_hosts.contains(&"mcp.example.com:443".to_owned()));
        assert!(config.allowed_origins.contains(&"https://mcp.example.com".to_owned()));
    }

    #[test]
    fn bad_settings_are_reported() {
        let args = AuthArgs { issuer: vec!["http://as.example.com".into()], ..AuthArgs::default() };
        assert!(args.http_config("127.0.0.1:8080".parse().unwrap()).is_err(), "plain http off loopback");
    }

    #[test]
    fn authorities() {
        assert_eq!(url_authority("https://h.example/mcp").unwrap().0, ["h.example", "h.example:443"]);
        assert_eq!(
            url_authority("http://h.example:8080/x").unwrap(),
            (vec!["h.example:8080".to_owned()], "http://h.example:8080".to_owned())
        );
        assert_eq!(url_authority("http://[::1]/mcp").unwrap().0, ["[::1]", "[::1]:80"]);
        assert!(url_authority("nope").is_err());
    }
}
