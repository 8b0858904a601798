//! mcp-otlp-sink, the trace collector of `scripts/bench-observability.sh`: it answers each
//! export with 200 on a kept-alive connection and, when stopped, says how much it took.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

#[test]
fn exports_on_one_connection_are_each_answered_and_counted() {
    let mut sink = Command::new(env!("CARGO_BIN_EXE_mcp-otlp-sink"))
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the sink starts");
    let mut out = BufReader::new(sink.stdout.take().expect("its stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("it says where it listens");
    let addr = line.trim().strip_prefix("listening ").expect("a `listening ADDR` line").to_owned();

    let mut stream = TcpStream::connect(&addr).expect("it accepts");
    let body = vec![7u8; 200_000];
    for _ in 0..2 {
        let head = format!(
            "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&body).unwrap();
        let mut answer = [0u8; 128];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut answer).expect("an answer");
            assert!(n > 0, "the connection stays open after an export");
            got.extend_from_slice(&answer[..n]);
        }
        let got = String::from_utf8(got).unwrap();
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        assert!(got.to_ascii_lowercase().contains("content-length: 0\r\n"), "{got}");
    }
    // A request the sink cannot read (a chunked body) closes that connection, and only it.
    let mut chunked = TcpStream::connect(&addr).unwrap();
    chunked.write_all(b"POST /v1/traces HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
    let mut rest = Vec::new();
    chunked.read_to_end(&mut rest).expect("closed, not hung");
    assert!(rest.is_empty(), "no answer to what it cannot read");

    let status = Command::new("kill").args(["-TERM", &sink.id().to_string()]).status().unwrap();
    assert!(status.success());
    let mut tail = String::new();
    out.read_to_string(&mut tail).unwrap();
    assert!(sink.wait().unwrap().success());
    assert_eq!(tail.trim(), "requests 2 bytes 400000");
}
