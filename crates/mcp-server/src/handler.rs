//! The handler trait: implemented for async functions whose arguments are extractors.

use std::future::Future;
use std::pin::Pin;

use mcp_types::JsonObject;

use crate::call::Call;
use crate::extract::{FromCall, FromCallLast, Rejection};

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// An async function usable as a tool, prompt or resource handler.
///
/// `A` is the tuple of its extractor types (it only disambiguates the implementations); `R`
/// is what it returns. Implemented for functions of up to eight extractors, where all but the
/// last implement [`FromCall`] and the last implements [`FromCallLast`].
pub trait Handler<A, R>: Clone + Send + Sync + 'static {
    /// Runs the handler for one call.
    fn call(&self, call: Call) -> BoxFuture<Result<R, Rejection>>;

    /// The JSON Schema of the arguments the handler consumes, if it consumes any.
    fn input_schema() -> Option<JsonObject>;
}

impl<F, Fut, R> Handler<(), R> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    fn call(&self, _call: Call) -> BoxFuture<Result<R, Rejection>> {
        let fut = (self)();
        Box::pin(async move { Ok(fut.await) })
    }

    fn input_schema() -> Option<JsonObject> {
        None
    }
}

macro_rules! impl_handler {
    ($($first:ident),* ; $last:ident) => {
        impl<F, Fut, R, $($first,)* $last> Handler<($($first,)* $last,), R> for F
        where
            F: Fn($($first,)* $last) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            $($first: FromCall,)*
            $last: FromCallLast,
        {
            #[allow(non_snake_case)]
            fn call(&self, mut call: Call) -> BoxFuture<Result<R, Rejection>> {
                let extracted = (|| {
                    $(let $first = $first::from_call(&call)?;)*
                    let $last = $last::from_call_last(&mut call)?;
                    Ok::<_, Rejection>(($($first,)* $last,))
                })();
                match extracted {
                    Ok(($($first,)* $last,)) => {
                        let fut = (self)($($first,)* $last);
                        Box::pin(async move { Ok(fut.await) })
                    }
                    Err(rejection) => Box::pin(async move { Err(rejection) }),
                }
            }

            fn input_schema() -> Option<JsonObject> {
                $last::input_schema()
            }
        }
    };
}

impl_handler!(; T1);
impl_handler!(T1; T2);
impl_handler!(T1, T2; T3);
impl_handler!(T1, T2, T3; T4);
impl_handler!(T1, T2, T3, T4; T5);
impl_handler!(T1, T2, T3, T4, T5; T6);
impl_handler!(T1, T2, T3, T4, T5, T6; T7);
impl_handler!(T1, T2, T3, T4, T5, T6, T7; T8);
