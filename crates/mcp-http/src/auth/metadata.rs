//! The Protected Resource Metadata (RFC 9728): at `/.well-known/oauth-protected-resource`
//! and at the path-based form for the resource's path and the endpoint's (e.g.
//! `/.well-known/oauth-protected-resource/mcp`). Public, read-only: only the Host allowlist
//! applies (a browser-based client on another origin may read it).

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use mcp_auth::metadata::ProtectedResourceMetadata;

use super::config::{AuthConfig, WELL_KNOWN};
use crate::config::HttpConfig;
use crate::guard;

struct Document {
    hosts: Vec<String>,
    json: Bytes,
}

/// The metadata document of `config`.
pub(crate) fn document(config: &AuthConfig) -> ProtectedResourceMetadata {
    let mut scopes = config.scopes_supported.clone();
    if scopes.is_empty() {
        scopes = config.required_scopes.clone();
        for extra in config.tool_scopes.values().flatten() {
            if !scopes.contains(extra) {
                scopes.push(extra.clone());
            }
        }
    }
    let dpop = config.dpop.as_ref();
    ProtectedResourceMetadata {
        resource: config.resource.clone(),
        authorization_servers: Some(config.issuers.clone()),
        scopes_supported: (!scopes.is_empty()).then_some(scopes),
        bearer_methods_supported: Some(vec!["header".to_owned()]),
        dpop_signing_alg_values_supported: dpop
            .map(|d| d.algorithms.iter().map(|a| a.as_str().to_owned()).collect()),
        dpop_bound_access_tokens_required: dpop.filter(|d| d.required).map(|_| true),
        ..ProtectedResourceMetadata::default()
    }
}

/// Where the document is served: the well-known path, its path-based form for the resource,
/// and for the endpoint. `AuthLayer` lets these through unauthenticated.
pub(crate) fn paths(http: &HttpConfig, auth: &AuthConfig) -> Vec<String> {
    let mut paths = vec![WELL_KNOWN.to_owned(), auth.metadata_path()];
    let endpoint = http.endpoint.trim_end_matches('/');
    if !endpoint.is_empty() {
        paths.push(format!("{WELL_KNOWN}{endpoint}"));
    }
    paths.sort();
    paths.dedup();
    paths
}

/// The metadata routes for `http` (which has `auth` set).
pub(crate) fn routes(http: &HttpConfig, auth: &AuthConfig) -> axum::Router {
    let json = serde_json::to_vec(&document(auth)).unwrap_or_default();
    let state = Arc::new(Document { hosts: http.allowed_hosts.clone(), json: Bytes::from(json) });
    let mut router = axum::Router::new();
    for path in paths(http, auth) {
        router = router.route(&path, axum::routing::get(serve));
    }
    router.with_state(state)
}

async fn serve(State(doc): State<Arc<Document>>, headers: HeaderMap) -> Response {
    // Host only: Origin is not checked for this public document.
    if let Err(r) = guard::host(&doc.hosts, &headers) {
        return (r.status, r.reason).into_response();
    }
    let mut response = (StatusCode::OK, doc.json.clone()).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}
