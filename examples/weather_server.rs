//! An MCP server written with mcpkit's libraries: two tools, a resource and a prompt, served over
//! stdio, or over Streamable HTTP with `--http ADDR`.
//!
//! ```text
//! cargo run -p mcpkit --example weather_server                          # stdio
//! cargo run -p mcpkit --example weather_server -- --http 127.0.0.1:8081  # http://127.0.0.1:8081/mcp
//! ```

use mcp_server::{Args, BuildError, Json, Prompts, Resources, Server, ToolError, Tools};
use mcp_types::{PromptMessage, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Made-up weather, so that the example needs no network: (city, °C, sky).
const CITIES: [(&str, f64, &str); 3] =
    [("Lisbon", 21.0, "sunny"), ("Oslo", -3.0, "snow"), ("Tokyo", 16.5, "rain")];

/// A tool's arguments are a struct: its JSON Schema (doc comments included) is the tool's
/// `inputSchema`, and the arguments are checked against it before the handler runs.
#[derive(Deserialize, JsonSchema)]
struct ForecastArgs {
    /// The city, e.g. "Oslo".
    city: String,
}

/// A tool that answers with text. A `ToolError` is a result with `isError: true`: the model
/// reads it and may try again.
async fn forecast(Args(ForecastArgs { city }): Args<ForecastArgs>) -> Result<String, ToolError> {
    let (name, celsius, sky) = CITIES
        .iter()
        .find(|(name, ..)| name.eq_ignore_ascii_case(&city))
        .ok_or_else(|| ToolError::new(format!("no forecast for {city}")))?;
    Ok(format!("{name}: {sky}, {celsius} °C"))
}

#[derive(Deserialize, JsonSchema)]
struct ConvertArgs {
    /// A temperature in degrees Celsius.
    celsius: f64,
}

#[derive(Serialize, JsonSchema)]
struct Fahrenheit {
    /// The same temperature in degrees Fahrenheit.
    fahrenheit: f64,
}

/// A tool with structured output: `Json<T>` answers with `structuredContent`, and `T`'s schema
/// is the tool's `outputSchema`.
async fn to_fahrenheit(Args(ConvertArgs { celsius }): Args<ConvertArgs>) -> Json<Fahrenheit> {
    Json(Fahrenheit { fahrenheit: celsius * 9.0 / 5.0 + 32.0 })
}

#[derive(Deserialize, JsonSchema)]
struct TripArgs {
    /// Where the trip goes.
    city: String,
}

/// A prompt: messages the host offers its user as a ready-made request.
async fn packing_list(Args(TripArgs { city }): Args<TripArgs>) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("Look up the forecast for {city}, then write me a packing list."))]
}

fn server() -> Result<Server, BuildError> {
    let tools = Tools::new().add("forecast", "Today's weather in a city", forecast).add(
        "to_fahrenheit",
        "Convert degrees Celsius to Fahrenheit",
        to_fahrenheit,
    );
    let cities: Vec<&str> = CITIES.iter().map(|(name, ..)| *name).collect();
    let resources = Resources::new()
        .text(Resource::new("weather://cities", "cities").with_mime_type("text/plain"), cities.join("\n"));
    let prompts = Prompts::new().add("packing_list", "A packing list for a trip", packing_list);
    Server::builder("weather", "1.0.0").tools(tools).resources(resources).prompts(prompts).build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        // Every MCP client can run this command; stdout carries nothing but MCP messages.
        [] => server.serve_stdio().await?,
        // Streamable HTTP for clients of every protocol revision. `None`: the default
        // configuration, whose Host and Origin checks allow the bound address.
        [flag, addr] if flag == "--http" => {
            let bound = mcp_http::bind(addr.parse()?).await?;
            eprintln!("listening on http://{}/mcp", bound.local_addr());
            mcp_http::serve(server, bound, None).await?;
        }
        _ => return Err("usage: weather_server [--http ADDR]".into()),
    }
    Ok(())
}
