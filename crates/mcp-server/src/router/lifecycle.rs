//! The handshake and session methods of legacy revisions, and `server/discover`.

use std::sync::Arc;

use mcp_types::{
    DiscoverResult, EmptyResult, ErrorObject, InitializeRequestParams, InitializeResult, ProtocolVersion,
    SetLevelRequestParams,
};

use super::finish::Cacheable;
use super::{Ctx, Failure, Routed, serialize};
use crate::call::Mode;
use crate::connection::Connection;
use crate::server::Server;
use crate::session::LegacySession;

impl Server {
    /// `initialize`: negotiates a legacy revision and opens the connection's session.
    pub(super) fn initialize(
        &self,
        connection: &Arc<Connection>,
        params: InitializeRequestParams,
        principal: Option<&crate::principal::Principal>,
    ) -> Routed {
        let version = self.negotiate(&params.protocol_version).ok_or_else(|| {
            Failure::after_dispatch(ErrorObject::invalid_params(format!(
                "this server speaks no legacy protocol revision; supported: {}",
                self.inner.config.versions.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            )))
        })?;
        // What the session keeps is the client's to choose: bound it, or a few `initialize`
        // calls with megabytes of capabilities each would outgrow any session budget.
        let limit = self.inner.config.max_client_info_bytes;
        let kept = json_len(&params.capabilities).saturating_add(json_len(&params.client_info));
        if kept > limit {
            return Err(Failure::after_dispatch(ErrorObject::invalid_params(format!(
                "`capabilities` and `clientInfo` take {kept} bytes; this server keeps at most {limit} for a session"
            ))));
        }
        let session = Arc::new(LegacySession::new(version, params.capabilities, params.client_info));
        connection.set_session(session.clone());
        super::forward_to_session(self.clone(), connection.clone(), session);
        let mut result = InitializeResult::new(
            version.as_str(),
            self.capabilities_for(principal, false),
            mcp_types::Implementation::clone(&self.inner.info),
        );
        result.instructions = self.inner.instructions.clone();
        serialize(&result).map(Some)
    }

    /// Takes up on `connection` a legacy session that began elsewhere — on another replica,
    /// whose sealed session id carried its revision and the client's capabilities and identity.
    /// The session then serves as if `initialize` had run here: requests under its revision,
    /// changes announced to it. Refused (`false`) for a revision this server does not serve as
    /// legacy.
    pub fn restore_session(
        &self,
        connection: &Arc<Connection>,
        version: mcp_types::ProtocolVersion,
        capabilities: mcp_types::ClientCapabilities,
        client_info: mcp_types::Implementation,
    ) -> bool {
        if version.is_modern() || !self.inner.config.versions.contains(&version) {
            return false;
        }
        let session = Arc::new(LegacySession::new(version, capabilities, client_info));
        connection.set_session(session.clone());
        super::forward_to_session(self.clone(), connection.clone(), session);
        true
    }

    /// The client's version when the server speaks it, else the newest legacy one it speaks.
    fn negotiate(&self, requested: &str) -> Option<ProtocolVersion> {
        let served = |v: &ProtocolVersion| !v.is_modern() && self.inner.config.versions.contains(v);
        ProtocolVersion::parse(requested)
            .filter(served)
            .or_else(|| self.inner.config.versions.iter().copied().filter(served).max())
    }

    /// `logging/setLevel` (legacy).
    pub(super) fn set_level(&self, ctx: &Ctx<'_>, params: SetLevelRequestParams) -> Routed {
        if let Mode::Legacy(session) = &ctx.mode {
            session.set_log_level(params.level);
        }
        serialize(&EmptyResult::default()).map(Some)
    }

    /// `resources/subscribe` (`subscribe`) and `resources/unsubscribe` (legacy).
    pub(super) fn subscribe(&self, ctx: &Ctx<'_>, uri: &str, subscribe: bool) -> Routed {
        if let Mode::Legacy(session) = &ctx.mode {
            if subscribe {
                session.subscribe(uri, &self.inner.interest);
            } else {
                session.unsubscribe(uri);
            }
        }
        serialize(&EmptyResult::default()).map(Some)
    }

    /// `server/discover` (modern).
    pub(super) fn discover(&self, ctx: &Ctx<'_>) -> Routed {
        let mut result = DiscoverResult {
            supported_versions: self.inner.config.versions.iter().map(|v| v.as_str().to_owned()).collect(),
            capabilities: self.capabilities_for(ctx.principal.as_deref(), true),
            instructions: self.inner.instructions.clone(),
            result_type: None,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
            extra: Default::default(),
        };
        let cache = &self.inner.config.cache;
        result.cache(cache.list_ttl.as_millis() as u64, self.list_scope());
        ctx.finish(result)
    }
}

/// The length of a value's JSON text, counted without building it.
fn json_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Serializing these types cannot fail; a failure would count as nothing kept.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
