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
use tokio::sync::OwnedSemaphorePermit;

use crate::auth::Authenticated;
use crate::service::{HttpState, busy, principal_permit};

/// The slots a POST holds while its request is handled.
pub(crate) struct Permits {
    request: OwnedSemaphorePermit,
    bytes: OwnedSemaphorePermit,
    principal: Option<OwnedSemaphorePermit>,
}

impl Permits {
    pub(crate) fn into_vec(self) -> Vec<OwnedSemaphorePermit> {
        let mut permits = vec![self.request, self.bytes];
        permits.extend(self.principal);
        permits
    }

    /// A long-lived stream gives back its request slots (in flight, and the principal's) for
    /// stream slots; it keeps its bytes counted, since its request stays in memory.
    pub(crate) fn into_stream(self, stream: Vec<OwnedSemaphorePermit>) -> Vec<OwnedSemaphorePermit> {
        let mut permits = stream;
        permits.push(self.bytes);
        permits
    }
}

/// The budget counts in KiB (a semaphore holds at most `u32::MAX` permits).
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX)
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
        .and_then(|v| v.trim().parse::<usize>().ok());
    // A body announced larger than `max_body` is still read up to it before the 413: answered
    // at once, with the rest unread, the connection would be reset under the client before it
    // reads the answer. Only `max_body` of it is charged.
    let declared = declared.map(|n| n.min(max));
    let request = state.in_flight.clone().try_acquire_owned().map_err(|_| busy())?;
    let principal = principal_permit(state, auth)?;
    let mut bytes =
        state.bytes.clone().try_acquire_many_owned(kib(declared.unwrap_or(0))).map_err(|_| busy())?;
    let read = async {
        let mut body = body;
        let mut buffer = BytesMut::with_capacity(declared.unwrap_or(0));
        while let Some(frame) = body.frame().await {
            let frame = frame
                .map_err(|_| (StatusCode::BAD_REQUEST, "request body could not be read").into_response())?;
            let Ok(data) = frame.into_data() else { continue };
            let total = buffer.len() + data.len();
            if total > max {
                return Err(too_large());
            }
            // Charge what arrives beyond what was declared before keeping it.
            let (needed, held) = (kib(total), bytes.num_permits() as u32);
            if needed > held {
                let more = state.bytes.clone().try_acquire_many_owned(needed - held).map_err(|_| busy())?;
                bytes.merge(more);
            }
            buffer.extend_from_slice(&data);
        }
        Ok(buffer.freeze())
    };
    match tokio::time::timeout(state.config.body_read_timeout, read).await {
        Err(_) => Err((StatusCode::REQUEST_TIMEOUT, "request body not received in time").into_response()),
        Ok(Err(refusal)) => Err(refusal),
        Ok(Ok(body)) => Ok((body, Permits { request, bytes, principal })),
    }
}
