//! The tokio adapters: reading frames (cancel safety included) and writing lines.

use std::time::Duration;

use mcp_stdio::{FrameError, FramedReader, FramedWriter, LineDecoder, ReadError};
use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

/// The next frame's text; panics on anything else.
async fn next_text<R: tokio::io::AsyncRead + Unpin>(reader: &mut FramedReader<R>) -> String {
    match reader.next_frame().await {
        Some(Ok(frame)) => frame.into_string(),
        other => panic!("expected a frame, got {other:?}"),
    }
}

#[tokio::test]
async fn reads_lines_then_unterminated_last_line() {
    let mut reader = FramedReader::new(&b"{\"a\":1}\r\n\n  \n[2]\n\"last\""[..]);
    assert_eq!(next_text(&mut reader).await, "{\"a\":1}");
    assert_eq!(next_text(&mut reader).await, "[2]");
    assert_eq!(next_text(&mut reader).await, "\"last\"");
    assert!(reader.next_frame().await.is_none());
    assert!(reader.next_frame().await.is_none(), "stays at end of input");
}

#[tokio::test]
async fn reports_bad_lines_and_goes_on() {
    let input = [b"\xEF\xBB\xBF{}\n".as_slice(), &[b'x'; 40], b"\n[]\n"].concat();
    let mut reader = FramedReader::with_decoder(&input[..], LineDecoder::new(16));
    assert!(matches!(reader.next_frame().await, Some(Err(ReadError::Frame(FrameError::ByteOrderMark)))));
    assert!(matches!(
        reader.next_frame().await,
        Some(Err(ReadError::Frame(FrameError::LineTooLong { limit: 16 })))
    ));
    assert_eq!(next_text(&mut reader).await, "[]");
    assert!(reader.next_frame().await.is_none());
}

#[tokio::test]
async fn cancelled_read_loses_no_bytes() {
    let (mut client, server) = duplex(64);
    let mut reader = FramedReader::new(server);

    client.write_all(b"{\"method\":").await.unwrap();
    // The read takes the partial line from the pipe, then waits for the rest until the
    // timeout drops the future.
    let cancelled = tokio::time::timeout(Duration::from_millis(50), reader.next_frame()).await;
    assert!(cancelled.is_err(), "no complete line yet");

    client.write_all(b"\"ping\"}\n").await.unwrap();
    assert_eq!(next_text(&mut reader).await, "{\"method\":\"ping\"}");

    drop(client);
    assert!(reader.next_frame().await.is_none());
}

#[tokio::test]
async fn cancelled_in_select_loses_no_bytes() {
    let (mut client, server) = duplex(64);
    let mut reader = FramedReader::new(server);

    client.write_all(b"[1,").await.unwrap();
    tokio::select! {
        biased;
        item = reader.next_frame() => panic!("no complete line yet, got {item:?}"),
        // Pending once, then ready: `next_frame` is polled (and reads the bytes) first.
        () = tokio::task::yield_now() => {}
    }
    client.write_all(b"2]\n").await.unwrap();
    assert_eq!(next_text(&mut reader).await, "[1,2]");
}

#[tokio::test]
async fn writes_whole_lines() {
    let (client, mut server) = duplex(1024);
    let mut writer = FramedWriter::new(client);
    writer.write_frame(b"{\n  \"a\": 1\r\n}").await.unwrap();
    writer.write_frame(b"[]").await.unwrap();
    drop(writer);

    let mut wire = Vec::new();
    server.read_to_end(&mut wire).await.unwrap();
    assert_eq!(wire, b"{   \"a\": 1  }\n[]\n");
}

#[tokio::test]
async fn writer_output_reads_back() {
    let (client, server) = duplex(1024);
    let mut writer = FramedWriter::new(client);
    let mut reader = FramedReader::new(server);
    writer.write_frame(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).await.unwrap();
    assert_eq!(next_text(&mut reader).await, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
}
