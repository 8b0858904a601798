//! Content: the blocks tools, prompts and sampling exchange (`ContentBlock`,
//! `SamplingMessageContentBlock`) and the contents of resources (`TextResourceContents`,
//! `BlobResourceContents`).
//!
//! Every block is tagged by its `"type"` member. The enums here dispatch on it and keep a kind
//! they do not know as `Unknown`, so that a block from a newer revision passes through a
//! gateway unchanged instead of failing the whole message.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::common::{Annotations, Icon};
use crate::json::{JsonObject, JsonValue};
use crate::wire_struct;

wire_struct! {
    /// Text content (`TextContent`, `"type": "text"`).
    #[derive(Default)]
    pub struct TextContent [tag "type" = "text"] {
        /// The text (written without a byte-at-a-time escape when it needs none).
        text text: String = "text",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { text: text.into(), ..Default::default() }
    }
}

wire_struct! {
    /// An image (`ImageContent`, `"type": "image"`).
    #[derive(Default)]
    pub struct ImageContent [tag "type" = "image"] {
        /// Base64-encoded image data.
        text data: String = "data",
        /// MIME type of the image, such as `image/png`.
        req mime_type: String = "mimeType",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl ImageContent {
    /// An image from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent { data: data.into(), mime_type: mime_type.into(), ..Default::default() }
    }
}

wire_struct! {
    /// Audio (`AudioContent`, `"type": "audio"`, 2025-03-26 and later).
    #[derive(Default)]
    pub struct AudioContent [tag "type" = "audio"] {
        /// Base64-encoded audio data.
        text data: String = "data",
        /// MIME type of the audio, such as `audio/wav`.
        req mime_type: String = "mimeType",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl AudioContent {
    /// Audio from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent { data: data.into(), mime_type: mime_type.into(), ..Default::default() }
    }
}

wire_struct! {
    /// A link to a resource the server can read (`ResourceLink`, `"type": "resource_link"`,
    /// 2025-06-18 and later). It need not appear in `resources/list`.
    #[derive(Default)]
    pub struct ResourceLink [tag "type" = "resource_link"] {
        /// The URI of the resource.
        req uri: String = "uri",
        /// Programmatic name.
        req name: String = "name",
        /// Display name.
        opt title: String = "title",
        /// What the resource is.
        opt description: String = "description",
        /// MIME type, if known.
        opt mime_type: String = "mimeType",
        /// Size of the raw content in bytes, if known.
        opt size: u64 = "size",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Icons for user interfaces (2025-11-25 and later).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (`MetaObject`).
        opt meta: JsonObject = "_meta",
    }
}

impl ResourceLink {
    /// A link with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink { uri: uri.into(), name: name.into(), ..Default::default() }
    }
}

wire_struct! {
    /// The contents of a resource embedded in a message (`EmbeddedResource`,
    /// `"type": "resource"`).
    pub struct EmbeddedResource [tag "type" = "resource"] {
        /// The contents, text or blob.
        req resource: ResourceContents = "resource",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl EmbeddedResource {
    /// Embeds these contents.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        EmbeddedResource {
            resource: resource.into(),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// A model's request to call a tool (`ToolUseContent`, `"type": "tool_use"`, sampling only,
    /// 2025-11-25 and later).
    #[derive(Default)]
    pub struct ToolUseContent [tag "type" = "tool_use"] {
        /// Identifier of this tool use, matched by a later `ToolResultContent`.
        req id: String = "id",
        /// The tool to call.
        req name: String = "name",
        /// The arguments, conforming to the tool's input schema.
        req input: JsonObject = "input",
        /// Metadata (`MetaObject`); clients should preserve it in later sampling requests.
        opt meta: JsonObject = "_meta",
    }
}

impl ToolUseContent {
    /// A tool use with an id, a tool name and arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        ToolUseContent { id: id.into(), name: name.into(), input, ..Default::default() }
    }
}

wire_struct! {
    /// The result of a tool use, sent back to the model (`ToolResultContent`,
    /// `"type": "tool_result"`, sampling only, 2025-11-25 and later).
    #[derive(Default)]
    pub struct ToolResultContent [tag "type" = "tool_result"] {
        /// The `id` of the `ToolUseContent` this answers.
        req tool_use_id: String = "toolUseId",
        /// Unstructured result, like `CallToolResult.content`.
        req content: Vec<ContentBlock> = "content",
        /// Structured result: any JSON in 2026-07-28, an object in 2025-11-25.
        opt structured_content: JsonValue = "structuredContent",
        /// Whether the tool use failed (default false).
        opt is_error: bool = "isError",
        /// Metadata (`MetaObject`).
        opt meta: JsonObject = "_meta",
    }
}

impl ToolResultContent {
    /// A tool result for the tool use `tool_use_id`.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolResultContent { tool_use_id: tool_use_id.into(), content, ..Default::default() }
    }
}

wire_struct! {
    /// Text contents of a resource (`TextResourceContents`).
    #[derive(Default)]
    pub struct TextResourceContents {
        /// The URI of the resource.
        req uri: String = "uri",
        /// The text.
        text text: String = "text",
        /// MIME type, if known.
        opt mime_type: String = "mimeType",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl TextResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        TextResourceContents { uri: uri.into(), text: text.into(), ..Default::default() }
    }
}

wire_struct! {
    /// Binary contents of a resource (`BlobResourceContents`).
    #[derive(Default)]
    pub struct BlobResourceContents {
        /// The URI of the resource.
        req uri: String = "uri",
        /// Base64-encoded data.
        text blob: String = "blob",
        /// MIME type, if known.
        opt mime_type: String = "mimeType",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl BlobResourceContents {
    /// Binary contents (base64) of the resource at `uri`.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        BlobResourceContents { uri: uri.into(), blob: blob.into(), ..Default::default() }
    }
}

/// The contents of a resource: text or binary.
///
/// The schema's `ResourceContents` is an abstract base (`{uri, mimeType?, _meta?}`) that only
/// ever appears as `TextResourceContents | BlobResourceContents`; this enum is that union.
/// There is no discriminator: an object with `text` is text, one with `blob` (and no `text`)
/// is binary, one with neither is an error.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The URI of the resource.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, if known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.text),
            ResourceContents::Blob(_) => None,
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(value: TextResourceContents) -> Self {
        ResourceContents::Text(value)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(value: BlobResourceContents) -> Self {
        ResourceContents::Blob(value)
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ResourceContents::Text(t) => t.serialize(serializer),
            ResourceContents::Blob(b) => b.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = crate::strict::object(deserializer)?;
        if object.contains_key("text") {
            Ok(ResourceContents::Text(crate::strict::from_object(object)?))
        } else if object.contains_key("blob") {
            Ok(ResourceContents::Blob(crate::strict::from_object(object)?))
        } else {
            Err(de::Error::custom("resource contents need a `text` or a `blob` member"))
        }
    }
}

/// A content block (`ContentBlock`): what tool results, prompt messages and tool-result
/// content carry. Dispatched by `"type"`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"` (2025-03-26 and later).
    Audio(AudioContent),
    /// `"resource_link"` (2025-06-18 and later).
    ResourceLink(ResourceLink),
    /// `"resource"`: embedded resource contents.
    Resource(EmbeddedResource),
    /// A kind this revision does not define, kept verbatim (it has a string `"type"`).
    Unknown(JsonObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 data and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(data, mime_type))
    }

    /// A resource link.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(uri, name))
    }

    /// An embedded resource.
    pub fn resource(contents: impl Into<ResourceContents>) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(contents))
    }

    /// The `"type"` of this block.
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::Unknown(o) => o.get("type").and_then(JsonValue::as_str).unwrap_or(""),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(value: TextContent) -> Self {
        ContentBlock::Text(value)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(value: ImageContent) -> Self {
        ContentBlock::Image(value)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(value: AudioContent) -> Self {
        ContentBlock::Audio(value)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(value: ResourceLink) -> Self {
        ContentBlock::ResourceLink(value)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(value: EmbeddedResource) -> Self {
        ContentBlock::Resource(value)
    }
}

impl From<String> for ContentBlock {
    fn from(value: String) -> Self {
        ContentBlock::text(value)
    }
}

impl From<&str> for ContentBlock {
    fn from(value: &str) -> Self {
        ContentBlock::text(value)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => c.serialize(serializer),
            ContentBlock::Image(c) => c.serialize(serializer),
            ContentBlock::Audio(c) => c.serialize(serializer),
            ContentBlock::ResourceLink(c) => c.serialize(serializer),
            ContentBlock::Resource(c) => c.serialize(serializer),
            ContentBlock::Unknown(o) => o.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = crate::strict::object(deserializer)?;
        let kind = crate::strict::tag(&object, "type")?;
        Ok(match kind.as_str() {
            "text" => ContentBlock::Text(crate::strict::from_object(object)?),
            "image" => ContentBlock::Image(crate::strict::from_object(object)?),
            "audio" => ContentBlock::Audio(crate::strict::from_object(object)?),
            "resource_link" => ContentBlock::ResourceLink(crate::strict::from_object(object)?),
            "resource" => ContentBlock::Resource(crate::strict::from_object(object)?),
            _ => ContentBlock::Unknown(object),
        })
    }
}

/// A block of a sampling message (`SamplingMessageContentBlock`): text, image, audio, or the
/// tool-use pair of 2025-11-25 and later. Dispatched by `"type"`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SamplingContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"` (2025-03-26 and later).
    Audio(AudioContent),
    /// `"tool_use"`: the model calls a tool (2025-11-25 and later).
    ToolUse(ToolUseContent),
    /// `"tool_result"`: the result of a tool use (2025-11-25 and later).
    ToolResult(ToolResultContent),
    /// A kind this revision does not define, kept verbatim (it has a string `"type"`).
    Unknown(JsonObject),
}

/// The schema's name for [`SamplingContentBlock`].
pub type SamplingMessageContentBlock = SamplingContentBlock;

impl SamplingContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        SamplingContentBlock::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 data and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        SamplingContentBlock::Audio(AudioContent::new(data, mime_type))
    }

    /// The `"type"` of this block.
    pub fn kind(&self) -> &str {
        match self {
            SamplingContentBlock::Text(_) => "text",
            SamplingContentBlock::Image(_) => "image",
            SamplingContentBlock::Audio(_) => "audio",
            SamplingContentBlock::ToolUse(_) => "tool_use",
            SamplingContentBlock::ToolResult(_) => "tool_result",
            SamplingContentBlock::Unknown(o) => o.get("type").and_then(JsonValue::as_str).unwrap_or(""),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for SamplingContentBlock {
    fn from(value: TextContent) -> Self {
        SamplingContentBlock::Text(value)
    }
}

impl From<ImageContent> for SamplingContentBlock {
    fn from(value: ImageContent) -> Self {
        SamplingContentBlock::Image(value)
    }
}

impl From<AudioContent> for SamplingContentBlock {
    fn from(value: AudioContent) -> Self {
        SamplingContentBlock::Audio(value)
    }
}

impl From<ToolUseContent> for SamplingContentBlock {
    fn from(value: ToolUseContent) -> Self {
        SamplingContentBlock::ToolUse(value)
    }
}

impl From<ToolResultContent> for SamplingContentBlock {
    fn from(value: ToolResultContent) -> Self {
        SamplingContentBlock::ToolResult(value)
    }
}

impl Serialize for SamplingContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContentBlock::Text(c) => c.serialize(serializer),
            SamplingContentBlock::Image(c) => c.serialize(serializer),
            SamplingContentBlock::Audio(c) => c.serialize(serializer),
            SamplingContentBlock::ToolUse(c) => c.serialize(serializer),
            SamplingContentBlock::ToolResult(c) => c.serialize(serializer),
            SamplingContentBlock::Unknown(o) => o.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = crate::strict::object(deserializer)?;
        let kind = crate::strict::tag(&object, "type")?;
        Ok(match kind.as_str() {
            "text" => SamplingContentBlock::Text(crate::strict::from_object(object)?),
            "image" => SamplingContentBlock::Image(crate::strict::from_object(object)?),
            "audio" => SamplingContentBlock::Audio(crate::strict::from_object(object)?),
            "tool_use" => SamplingContentBlock::ToolUse(crate::strict::from_object(object)?),
            "tool_result" => SamplingContentBlock::ToolResult(crate::strict::from_object(object)?),
            _ => SamplingContentBlock::Unknown(object),
        })
    }
}

/// The `content` of a sampling message or `CreateMessageResult`: one block (every revision) or
/// an array of blocks (2025-11-25 and later). Decoded by shape, re-encoded in the same shape.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContent {
    /// A single block (a JSON object).
    Single(SamplingContentBlock),
    /// Several blocks (a JSON array).
    Many(Vec<SamplingContentBlock>),
}

impl SamplingContent {
    /// The blocks, whichever the shape.
    pub fn blocks(&self) -> &[SamplingContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Many(v) => v,
        }
    }

    /// The blocks as a vector, whichever the shape.
    pub fn into_blocks(self) -> Vec<SamplingContentBlock> {
        match self {
            SamplingContent::Single(b) => vec![b],
            SamplingContent::Many(v) => v,
        }
    }

    /// Single text content.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Single(SamplingContentBlock::text(text))
    }
}

impl From<SamplingContentBlock> for SamplingContent {
    fn from(value: SamplingContentBlock) -> Self {
        SamplingContent::Single(value)
    }
}

impl From<Vec<SamplingContentBlock>> for SamplingContent {
    fn from(value: Vec<SamplingContentBlock>) -> Self {
        SamplingContent::Many(value)
    }
}

impl From<TextContent> for SamplingContent {
    fn from(value: TextContent) -> Self {
        SamplingContent::Single(value.into())
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Single(b) => b.serialize(serializer),
            SamplingContent::Many(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match crate::strict::value(deserializer)? {
            JsonValue::Array(items) => items
                .into_iter()
                .map(|item| SamplingContentBlock::deserialize(item).map_err(de::Error::custom))
                .collect::<Result<Vec<_>, D::Error>>()
                .map(SamplingContent::Many),
            JsonValue::Object(object) => Ok(SamplingContent::Single(crate::strict::from_object(object)?)),
            _ => Err(de::Error::custom("sampling content must be an object or an array of objects")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    fn round_trip<T: Serialize + DeserializeOwned>(text: &str) -> T {
        let value: T = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&value).unwrap();
        let orig: JsonValue = serde_json::from_str(text).unwrap();
        assert_eq!(back, orig, "round trip of {text}");
        value
    }

    #[test]
    fn content_blocks_dispatch_by_type() {
        let text: ContentBlock = round_trip(r#"{"type":"text","text":"Tool result text"}"#);
        assert_eq!(text.as_text(), Some("Tool result text"));

        let image: ContentBlock = round_trip(
            r#"{"type":"image","data":"iVBO","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.9}}"#,
        );
        let ContentBlock::Image(image) = image else { panic!("not an image: {image:?}") };
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.annotations.unwrap().priority, Some(0.9));

        let audio: ContentBlock = round_trip(r#"{"type":"audio","data":"UklG","mimeType":"audio/wav"}"#);
        assert!(matches!(audio, ContentBlock::Audio(ref a) if a.data == "UklG"));

        let link: ContentBlock = round_trip(
            r#"{"type":"resource_link","uri":"file:///project/src/main.rs","name":"main.rs","description":"Primary application entry point","mimeType":"text/x-rust"}"#,
        );
        assert!(matches!(link, ContentBlock::ResourceLink(ref l) if l.name == "main.rs"));

        let embedded: ContentBlock = round_trip(
            r#"{"type":"resource","resource":{"uri":"file:///project/src/main.rs","mimeType":"text/x-rust","text":"fn main() {}"},"annotations":{"audience":["user","assistant"],"priority":0.7,"lastModified":"2025-05-03T14:30:00Z"}}"#,
        );
        let ContentBlock::Resource(embedded) = embedded else { panic!("not a resource") };
        assert_eq!(embedded.resource.as_text(), Some("fn main() {}"));
        assert_eq!(embedded.resource.uri(), "file:///project/src/main.rs");
    }

    #[test]
    fn unknown_content_kind_is_kept() {
        let text = r#"{"type":"video","url":"https://x/v.mp4","_meta":{"a":1}}"#;
        let block: ContentBlock = round_trip(text);
        assert_eq!(block.kind(), "video");
        assert!(matches!(block, ContentBlock::Unknown(_)));
        // tool_use is not a ContentBlock kind: kept, not rejected.
        let block: ContentBlock =
            serde_json::from_str(r#"{"type":"tool_use","id":"1","name":"n","input":{}}"#).unwrap();
        assert!(matches!(block, ContentBlock::Unknown(_)));
    }

    #[test]
    fn missing_or_bad_discriminator_is_an_error() {
        let err = serde_json::from_str::<ContentBlock>(r#"{"text":"hi"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `type`"), "{err}");
        assert!(serde_json::from_str::<ContentBlock>(r#"{"type":3,"text":"hi"}"#).is_err());
        assert!(serde_json::from_str::<SamplingContentBlock>(r#"{"data":"x"}"#).is_err());
    }

    #[test]
    fn known_kind_with_bad_members_is_an_error() {
        let err = serde_json::from_str::<ContentBlock>(r#"{"type":"image","data":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("mimeType"), "{err}");
        let err = serde_json::from_str::<ContentBlock>(r#"{"type":"text","text":5}"#).unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }

    #[test]
    fn duplicate_members_are_rejected_at_any_depth() {
        let err =
            serde_json::from_str::<ContentBlock>(r#"{"type":"text","text":"a","text":"b"}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate field `text`"), "{err}");
        let err =
            serde_json::from_str::<ContentBlock>(r#"{"type":"text","type":"image","text":"a"}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate field `type`"), "{err}");
        let err = serde_json::from_str::<ContentBlock>(
            r#"{"type":"resource","resource":{"uri":"u","text":"a","uri":"v"}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("duplicate field `uri`"), "{err}");
    }

    #[test]
    fn resource_contents_dispatch_by_member() {
        let text: ResourceContents =
            round_trip(r#"{"uri":"file:///example.txt","mimeType":"text/plain","text":"Resource content"}"#);
        assert!(matches!(text, ResourceContents::Text(_)));
        let blob: ResourceContents =
            round_trip(r#"{"uri":"file:///example.png","mimeType":"image/png","blob":"iVBO"}"#);
        assert!(matches!(blob, ResourceContents::Blob(ref b) if b.blob == "iVBO"));
        assert_eq!(blob.mime_type(), Some("image/png"));
        let err = serde_json::from_str::<ResourceContents>(r#"{"uri":"file:///x"}"#).unwrap_err();
        assert!(err.to_string().contains("`text` or a `blob`"), "{err}");
        // Both present: text wins, `blob` is kept as an extra member.
        let both: ResourceContents = round_trip(r#"{"uri":"u","text":"t","blob":"b"}"#);
        assert!(matches!(both, ResourceContents::Text(ref t) if t.extra.contains_key("blob")));
    }

    #[test]
    fn sampling_blocks_and_shapes() {
        let tool_use: SamplingContentBlock = round_trip(
            r#"{"type":"tool_use","id":"call_abc123","name":"get_weather","input":{"city":"Paris"}}"#,
        );
        let SamplingContentBlock::ToolUse(tool_use) = tool_use else { panic!() };
        assert_eq!(tool_use.input.get("city"), Some(&json!("Paris")));

        let tool_result: SamplingContentBlock = round_trip(
            r#"{"type":"tool_result","toolUseId":"call_abc123","content":[{"type":"text","text":"Weather in Paris: 18°C, partly cloudy"}]}"#,
        );
        let SamplingContentBlock::ToolResult(tool_result) = tool_result else { panic!() };
        assert_eq!(tool_result.content[0].as_text(), Some("Weather in Paris: 18°C, partly cloudy"));

        // resource_link is not a sampling kind.
        let other: SamplingContentBlock = round_trip(r#"{"type":"resource_link","uri":"u","name":"n"}"#);
        assert_eq!(other.kind(), "resource_link");
        assert!(matches!(other, SamplingContentBlock::Unknown(_)));

        let single: SamplingContent = round_trip(r#"{"type":"text","text":"hi"}"#);
        assert!(matches!(single, SamplingContent::Single(_)));
        assert_eq!(single.blocks().len(), 1);
        let many: SamplingContent =
            round_trip(r#"[{"type":"text","text":"a"},{"type":"image","data":"d","mimeType":"image/png"}]"#);
        assert!(matches!(many, SamplingContent::Many(ref v) if v.len() == 2));
        assert_eq!(many.into_blocks()[1].kind(), "image");
        let empty: SamplingContent = round_trip("[]");
        assert!(empty.blocks().is_empty());
        assert!(serde_json::from_str::<SamplingContent>(r#""text""#).is_err());
        assert!(serde_json::from_str::<SamplingContent>(r#"[{"type":"text"}]"#).is_err());
    }

    #[test]
    fn tool_result_structured_content_keeps_any_json() {
        let block: ToolResultContent = round_trip(
            r#"{"type":"tool_result","toolUseId":"1","content":[],"structuredContent":[1,2],"isError":false}"#,
        );
        assert_eq!(block.structured_content, Some(json!([1, 2])));
    }

    #[test]
    fn constructors_and_conversions() {
        assert_eq!(
            serde_json::to_value(ContentBlock::text("hi")).unwrap(),
            json!({"type":"text","text":"hi"})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::image("d", "image/png")).unwrap(),
            json!({"type":"image","data":"d","mimeType":"image/png"})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::resource(TextResourceContents::new("file:///a", "x")))
                .unwrap(),
            json!({"type":"resource","resource":{"uri":"file:///a","text":"x"}})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::resource(BlobResourceContents::new("file:///b", "AA==")))
                .unwrap(),
            json!({"type":"resource","resource":{"uri":"file:///b","blob":"AA=="}})
        );
        let block: ContentBlock = TextContent::new("x").into();
        assert_eq!(block, ContentBlock::from("x"));
        let sc: SamplingContent = TextContent::new("y").into();
        assert_eq!(sc, SamplingContent::text("y"));
        let tu = SamplingContentBlock::from(ToolUseContent::new("1", "t", JsonObject::new()));
        assert_eq!(
            serde_json::to_value(tu).unwrap(),
            json!({"type":"tool_use","id":"1","name":"t","input":{}})
        );
    }

    #[test]
    fn meta_and_extension_members_round_trip() {
        let block: ContentBlock =
            round_trip(r#"{"type":"text","text":"a","_meta":{"k":{"v":1}},"x-ext":true}"#);
        let ContentBlock::Text(t) = block else { panic!() };
        assert_eq!(t.meta.unwrap().get("k"), Some(&json!({"v":1})));
        assert_eq!(t.extra.get("x-ext"), Some(&json!(true)));
        let decoded =
            ContentBlock::deserialize(json!({"type":"audio","data":"a","mimeType":"audio/wav"})).unwrap();
        assert_eq!(decoded.kind(), "audio");
    }
}
