//! What a POST may hold before its JSON is parsed (steps 7 and 8 of the DECISIONS.md order): a
//! request slot, in total and for its principal, and the bytes of its body — charged against
//! the bytes-in-flight budget *before* they are read: a declared `Content-Length` up front, a
//! body without one as its chunks arrive. Bodies still being read count against the budget, so
//! many slow or large uploads at once cannot hold more memory than it allows.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http::{HeaderMap, StatusCode, header};
use http_body_util::BodyExt;

use std::sync::{Arc, Mutex};

use crate::caller::Authenticated;
use crate::gate::Permit;
use crate::service::{HttpState, busy, principal_permit};

/// The slots a POST holds while its request is handled.
pub(crate) struct Permits {
    request: Permit,
    bytes: Permit,
    principal: Option<Permit>,
}

/// A POST admitted by `LimitsLayer` before it reached the endpoint: its slots, handed over in
/// the request's extensions (which need `Clone`, hence the shared cell; the endpoint takes
/// them out once). Its body, read within the limits, is the request's body.
#[derive(Clone)]
pub(crate) struct Admitted(Arc<Mutex<Option<Permits>>>);

impl Admitted {
    pub(crate) fn new(permits: Permits) -> Self {
        Admitted(Arc::new(Mutex::new(Some(permits))))
    }

    fn take(&self) -> Option<Permits> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Permits {
    pub(crate) fn into_vec(self) -> Vec<Permit> {
        let mut permits = vec![self.request, self.bytes];
        permits.extend(self.principal);
        permits
    }

    /// A long-lived stream gives back its request slots (in flight, and the principal's) for
    /// stream slots; it keeps its bytes counted, since its request stays in memory.
    pub(crate) fn into_stream(self, stream: Vec<Permit>) -> Vec<Permit> {
        let mut permits = stream;
        permits.push(self.bytes);
        permits
    }
}

/// The budget counts in KiB.
fn kib(bytes: usize) -> usize {
    bytes.div_ceil(1024).max(1)
}

fn too_large() -> Response {
    (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response()
}

/// Takes a POST's slots, then reads its body within `max_body`, the read deadline and the
/// bytes-in-flight budget: `413` for a body (declared or read) over `max_body`, `503` with
/// `Retry-After` when a slot or the bytes are not to be had, `408` past the deadline, `400`
/// for a body that cannot be read.
pub(crate) async fn read_post(
    state: &HttpState,
    headers: &HeaderMap,
    body: Body,
    auth: Option<&Authenticated>,
) -> Result<(Bytes, Permits), Response> {
    let max = state.config.max_body;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_ascii().parse::<usize>().ok());
    // A body announced larger than `max_body` is still read up to it before the 413: answered
    // at once, with the rest unread, the connection would be reset under the client before it
    // reads the answer. Only `max_body` of it is charged.
    let declared = declared.map(|n| n.min(max));
    let request = state.in_flight.try_one().ok_or_else(busy)?;
    let principal = principal_permit(state, auth)?;
    let mut bytes = state.bytes.try_take(kib(declared.unwrap_or(0))).ok_or_else(busy)?;
    let body = read_body(state, body, declared.unwrap_or(0), Some(&mut bytes)).await?;
    Ok((body, Permits { request, bytes, principal }))
}

/// A POST's body and slots: those `LimitsLayer` admitted it with, when it ran in front of the
/// endpoint, else taken here by [`read_post`] — the budgets apply wherever the stack puts
/// them, and without the layer at the endpoint's own step 7. A layer that ran before the
/// caller was known took no principal slot: it is taken here.
pub(crate) async fn admit(
    state: &HttpState,
    headers: &HeaderMap,
    body: Body,
    auth: Option<&Authenticated>,
    admitted: Option<Admitted>,
) -> Result<(Bytes, Permits), Response> {
    let Some(mut permits) = admitted.and_then(|a| a.take()) else {
        return read_post(state, headers, body, auth).await;
    };
    if permits.principal.is_none() {
        permits.principal = principal_permit(state, auth)?;
    }
    // Already read and charged; read again within `max_body` all the same (a layer between
    // may have replaced the body), but not charged twice.
    let body = read_body(state, body, 0, None).await?;
    Ok((body, permits))
}

/// Reads `body` within `max_body` and the read deadline, charging `budget` (when given) for
/// what arrives beyond what it holds before keeping it.
async fn read_body(
    state: &HttpState,
    body: Body,
    capacity: usize,
    mut budget: Option<&mut Permit>,
) -> Result<Bytes, Response> {
    let max = state.config.max_body;
    let read = async {
        let mut body = body;
        let mut buffer = BytesMut::with_capacity(capacity);
        while let Some(frame) = body.frame().await {
            let frame = frame
                .map_err(|_| (StatusCode::BAD_REQUEST, "request body could not be read").into_response())?;
            let Ok(data) = frame.into_data() else { continue };
            let total = buffer.len() + data.len();
            if total > max {
                return Err(too_large());
            }
            if let Some(bytes) = budget.as_deref_mut() {
                // Charge what arrives beyond what was declared before keeping it.
                let (needed, held) = (kib(total), bytes.count());
                if needed > held && !bytes.grow(needed - held) {
                    return Err(busy());
                }
            }
            buffer.extend_from_slice(&data);
        }
        Ok(buffer.freeze())
    };
    match tokio::time::timeout(state.config.body_read_timeout, read).await {
        Err(_) => Err((StatusCode::REQUEST_TIMEOUT, "request body not received in time").into_response()),
        Ok(result) => result,
    }
}
