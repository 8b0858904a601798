//! What an OTLP/HTTP collector answers an export with: an `Export{Trace,Metrics,Logs}ServiceResponse`,
//! whose one field, `partial_success`, says how many items (spans, data points) it rejected
//! and why. A `200` may still carry rejections, which an exporter logs and does not send again.
//! One reader for the traces' exporter (mcp-trace) and the metrics' (`otlp`): the three
//! messages share their layout.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse;
use prost::Message;

/// The most of an answer an exporter reads: the message is a few bytes; past this the rest is
/// left unread (and its connection with it).
pub const ANSWER_LIMIT: usize = 64 * 1024;

/// A partial success: the items the collector rejected, and its message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartialSuccess {
    /// Spans, data points or log records rejected.
    pub rejected: i64,
    /// The collector's reason (empty when it gave none).
    pub message: String,
}

impl PartialSuccess {
    /// The partial success in an encoded export response: `Some` only when the collector
    /// reported a rejection or a message, `None` for a full success (an empty answer, or an
    /// empty `partial_success`) and for bytes that are not the message.
    pub fn of(answer: &[u8]) -> Option<PartialSuccess> {
        // The traces', metrics' and logs' responses have one layout (field 1, a message of an
        // int64 count in its field 1 and a string in its field 2), so one decoder reads them all.
        let partial = ExportMetricsServiceResponse::decode(answer).ok()?.partial_success?;
        (partial.rejected_data_points != 0 || !partial.error_message.is_empty()).then_some(PartialSuccess {
            rejected: partial.rejected_data_points,
            message: partial.error_message,
        })
    }
}

impl crate::OtlpTarget {
    /// Posts one export request (`body`, OTLP protobuf, compressed as the target says) to this
    /// target with its headers, reads the collector's answer ([`read_answer`]), and logs how it
    /// went: a refusal or a failure as a warning naming `items` (what the request carried, as
    /// `"512 spans"`), dropped; a partial success as a warning with the collector's reason.
    /// Nothing is sent again.
    pub async fn post<B>(&self, client: &reqwest::Client, body: B, items: &str)
    where
        B: AsRef<[u8]> + Into<reqwest::Body>,
    {
        self.post_to(client, self.url.as_str(), body, items).await;
    }

    /// [`OtlpTarget::post`] to `url`: this target's URL parsed once by a caller that posts
    /// often (the trace exporter, every batch), instead of parsed again for each request.
    pub async fn post_to<U, B>(&self, client: &reqwest::Client, url: U, body: B, items: &str)
    where
        U: reqwest::IntoUrl,
        B: AsRef<[u8]> + Into<reqwest::Body>,
    {
        let (body, encoding) = self.encoded(body);
        let mut request =
            client.post(url).header(reqwest::header::CONTENT_TYPE, "application/x-protobuf").body(body);
        if let Some(encoding) = encoding {
            request = request.header(reqwest::header::CONTENT_ENCODING, encoding);
        }
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        match request.send().await {
            Ok(response) if response.status().is_success() => match read_answer(response).await {
                Ok(None) => {}
                Ok(Some(partial)) => tracing::warn!(
                    rejected = partial.rejected,
                    "the OTLP collector rejected {} of {items}: {}",
                    partial.rejected,
                    if partial.message.is_empty() { "no reason given" } else { &partial.message }
                ),
                Err(e) => tracing::debug!("the OTLP export of {items}: {e}"),
            },
            Ok(response) => tracing::warn!(
                status = response.status().as_u16(),
                "the OTLP export of {items} was refused; dropped"
            ),
            Err(e) => tracing::warn!("the OTLP export of {items} failed ({e}); dropped"),
        }
    }
}

/// Reads a successful export's answer: at most [`ANSWER_LIMIT`] bytes, to its end so that its
/// connection serves the next export. `Ok(Some)` when a protobuf answer reports a partial
/// success; `Err` with what went wrong when the answer was longer than an answer can be or
/// could not be read (the connection then goes with the response, unless hyper's one last
/// read on dropping it reaches the answer's end: at most one read buffer more).
pub async fn read_answer(mut response: reqwest::Response) -> Result<Option<PartialSuccess>, String> {
    let protobuf = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .is_none_or(|v| v.as_bytes().starts_with(b"application/x-protobuf"));
    let mut answer = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if answer.len() + chunk.len() <= ANSWER_LIMIT => answer.extend_from_slice(&chunk),
            Ok(Some(_)) => {
                return Err(format!("the answer is longer than {ANSWER_LIMIT} bytes: left unread"));
            }
            Ok(None) => break,
            Err(e) => return Err(format!("the answer could not be read: {e}")),
        }
    }
    Ok(protobuf.then(|| PartialSuccess::of(&answer)).flatten())
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsPartialSuccess;

    use super::*;

    fn encoded(partial: Option<ExportMetricsPartialSuccess>) -> Vec<u8> {
        ExportMetricsServiceResponse { partial_success: partial }.encode_to_vec()
    }

    #[test]
    fn a_rejection_and_its_message_are_read() {
        let answer = encoded(Some(ExportMetricsPartialSuccess {
            rejected_data_points: 7,
            error_message: "spans too old".into(),
        }));
        assert_eq!(
            PartialSuccess::of(&answer),
            Some(PartialSuccess { rejected: 7, message: "spans too old".into() })
        );
        let message_only = encoded(Some(ExportMetricsPartialSuccess {
            rejected_data_points: 0,
            error_message: "slow down".into(),
        }));
        assert_eq!(
            PartialSuccess::of(&message_only),
            Some(PartialSuccess { rejected: 0, message: "slow down".into() })
        );
    }

    #[test]
    fn a_full_success_is_none() {
        assert_eq!(PartialSuccess::of(&[]), None);
        assert_eq!(PartialSuccess::of(&encoded(None)), None);
        assert_eq!(PartialSuccess::of(&encoded(Some(ExportMetricsPartialSuccess::default()))), None);
        // An empty partial_success, as some collectors always send it.
        assert_eq!(PartialSuccess::of(&[0x0a, 0x00]), None);
    }

    #[test]
    fn unknown_fields_are_skipped_and_broken_bytes_refused() {
        let mut answer = vec![0x10, 0x96, 0x01]; // field 2, varint 150
        answer.extend([0x1d, 1, 2, 3, 4]); // field 3, fixed32
        answer.extend([0x21, 1, 2, 3, 4, 5, 6, 7, 8]); // field 4, fixed64
        answer.extend(encoded(Some(ExportMetricsPartialSuccess {
            rejected_data_points: 3,
            error_message: String::new(),
        })));
        assert_eq!(PartialSuccess::of(&answer), Some(PartialSuccess { rejected: 3, message: String::new() }));
        // A length past the end, a varint that never ends, a wire type that does not exist.
        assert_eq!(PartialSuccess::of(&[0x0a, 0x05, 0x08]), None);
        assert_eq!(
            PartialSuccess::of(&[0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            None
        );
        assert_eq!(PartialSuccess::of(&[0x0f]), None);
        // JSON is not the message.
        assert_eq!(PartialSuccess::of(br#"{"partialSuccess":{}}"#), None);
    }
}
