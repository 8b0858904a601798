//! Who a request comes from, once authorization has said so: what the endpoint's budgets,
//! sessions and handlers need of an authenticated caller. It lives outside the `auth` module
//! because those parts exist with the `oauth` feature off too (then nothing is ever
//! authenticated and every caller is anonymous).

// Without `oauth` nothing constructs these; the code that reads them stays one code path.
#![cfg_attr(not(feature = "oauth"), allow(dead_code))]

use std::sync::Arc;

use mcp_server::Principal;

/// The scheme a token came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    Bearer,
    Dpop,
}

/// An authenticated request: who, and the key its legacy sessions are bound to. Travels in the
/// request's extensions from `AuthLayer` to the endpoint; only this crate can name the type, so
/// no other layer can forge one.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated {
    pub(crate) principal: Arc<Principal>,
    /// Issuer and subject (or client id): sessions and in-flight limits are per this key.
    pub(crate) key: String,
    pub(crate) scheme: Scheme,
}
