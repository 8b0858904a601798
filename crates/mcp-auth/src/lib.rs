//! The IO-free building blocks of MCP authorization (OAuth 2.1).
//!
//! What this crate does:
//!
//! * [`jose`]: JSON Web Keys (RFC 7517), RFC 7638 thumbprints, compact JWS signing and
//!   verification with pinned algorithms (never `none`, never HMAC), and JWT claims validation
//!   (RFC 7519) with bounded leeway;
//! * [`pkce`]: PKCE verifiers and `S256` challenges (RFC 7636), `state` values;
//! * [`dpop`]: DPoP proofs, building and checking them (RFC 9449);
//! * [`metadata`]: protected resource metadata (RFC 9728) and authorization server metadata
//!   (RFC 8414, OpenID Connect Discovery), the well-known URLs to probe in the order MCP
//!   requires, and the resource checks (RFC 8707 canonical URIs);
//! * [`challenge`]: parsing and building `WWW-Authenticate` values (RFC 9110, RFC 6750);
//! * [`scope`]: scope strings as sets.
//!
//! What it does not do: IO, async, HTTP, clocks other than [`std::time::SystemTime::now`]
//! (which every time-dependent check lets a caller replace), storage, replay caches.
//!
//! Cryptography is `ring`'s. `Display` texts of errors are for humans, never contain a token or
//! key material, and are not a stable API: match on the variants.

#![warn(missing_docs)]

mod util;

pub mod challenge;
pub mod dpop;
pub mod jose;
pub mod metadata;
pub mod pkce;
pub mod scope;
