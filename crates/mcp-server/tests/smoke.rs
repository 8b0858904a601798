mod support;

use mcp_server::{Args, Json, Server, Tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::*;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

async fn add(Args(AddArgs { a, b }): Args<AddArgs>) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

fn server() -> Server {
    Server::builder("t", "1").tools(Tools::new().add("add", "Add", add)).build().unwrap()
}

#[tokio::test]
async fn modern_and_legacy_smoke() {
    let mut p = Peer::start(server());
    let r = p.request(json!(1), "tools/list", json!({"_meta": meta(json!({}))})).await;
    println!("{r}");
    let r = p
        .request(
            json!(2),
            "tools/call",
            json!({"_meta": meta(json!({})), "name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    println!("{r}");
    let r = p.initialize(json!({})).await;
    println!("{r}");
    let r = p.request(json!(3), "tools/call", json!({"name": "add", "arguments": {"a": 1, "b": "x"}})).await;
    println!("{r}");
    p.close().await;
}
