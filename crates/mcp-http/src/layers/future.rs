//! The future of the checks that answer at once or pass the request on: no allocation for
//! either way, so a check in front of the endpoint costs only the check.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::response::Response;

pin_project_lite::pin_project! {
    /// The answer of [`Head`](super::Head) or [`HostGuard`](super::HostGuard): their refusal,
    /// or the inner service's response.
    pub struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<F> {
        Refused { response: Option<Response> },
        Inner { #[pin] future: F },
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn refused(response: Response) -> Self {
        ResponseFuture { state: State::Refused { response: Some(response) } }
    }

    pub(crate) fn inner(future: F) -> Self {
        ResponseFuture { state: State::Inner { future } }
    }
}

impl<F, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            // Polling a finished future again is a caller's bug (the `Future` contract).
            StateProj::Refused { response } => {
                Poll::Ready(Ok(response.take().expect("ResponseFuture polled after completion")))
            }
            StateProj::Inner { future } => future.poll(cx),
        }
    }
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
