//! The primitive schemas an elicitation form may use (`PrimitiveSchemaDefinition` and its
//! variants), dispatched by shape.

use serde::de;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::{JsonObject, JsonValue};
use crate::strict;
use crate::{open_enum, wire_struct};

open_enum! {
    /// The `format` of a [`StringSchema`].
    #[non_exhaustive]
    pub enum StringFormat {
        /// `YYYY-MM-DD`.
        Date = "date",
        /// ISO 8601 date and time.
        DateTime = "date-time",
        /// An email address.
        Email = "email",
        /// A URI.
        Uri = "uri",
    }
}

wire_struct! {
    /// A free-text field (`StringSchema`).
    #[derive(Default)]
    pub struct StringSchema [tag "type" = "string"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// Minimum length.
        opt min_length: u64 = "minLength",
        /// Maximum length.
        opt max_length: u64 = "maxLength",
        /// Expected format.
        opt format: StringFormat = "format",
        /// Default value (2025-11-25 and later).
        opt default: String = "default",
    }
}

open_enum! {
    /// The `type` of a [`NumberSchema`].
    pub enum NumberKind {
        /// Whole numbers only.
        Integer = "integer",
        /// Any number.
        Number = "number",
    }
}

wire_struct! {
    /// A numeric field (`NumberSchema`). Bounds and default are kept as JSON numbers so that
    /// `18` stays `18` (not `18.0`) when forwarded.
    pub struct NumberSchema {
        /// `"integer"` or `"number"`.
        req kind: NumberKind = "type",
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// Minimum value.
        opt minimum: serde_json::Number = "minimum",
        /// Maximum value.
        opt maximum: serde_json::Number = "maximum",
        /// Default value (2025-11-25 and later).
        opt default: serde_json::Number = "default",
    }
}

impl NumberSchema {
    /// A schema of this kind with no constraints.
    pub fn new(kind: NumberKind) -> Self {
        NumberSchema {
            kind,
            title: None,
            description: None,
            minimum: None,
            maximum: None,
            default: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// A yes/no field (`BooleanSchema`).
    #[derive(Default)]
    pub struct BooleanSchema [tag "type" = "boolean"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// Default value.
        opt default: bool = "default",
    }
}

wire_struct! {
    /// One choice of a titled enum: `{"const": value, "title": label}`.
    pub struct TitledEnumOption {
        /// The value submitted when chosen.
        req value: String = "const",
        /// The label shown.
        req title: String = "title",
    }
}

impl TitledEnumOption {
    /// An option with this value and label.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        TitledEnumOption { value: value.into(), title: title.into(), extra: JsonObject::new() }
    }
}

wire_struct! {
    /// A single choice among plain values (`UntitledSingleSelectEnumSchema`).
    #[derive(Default)]
    pub struct UntitledSingleSelectEnumSchema [tag "type" = "string"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// The values to choose from.
        req values: Vec<String> = "enum",
        /// Default value.
        opt default: String = "default",
    }
}

wire_struct! {
    /// A single choice among labelled values (`TitledSingleSelectEnumSchema`).
    #[derive(Default)]
    pub struct TitledSingleSelectEnumSchema [tag "type" = "string"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// The options to choose from.
        req one_of: Vec<TitledEnumOption> = "oneOf",
        /// Default value.
        opt default: String = "default",
    }
}

wire_struct! {
    /// The `items` of an [`UntitledMultiSelectEnumSchema`]: `{"type":"string","enum":[…]}`.
    #[derive(Default)]
    pub struct UntitledEnumItems [tag "type" = "string"] {
        /// The values to choose from.
        req values: Vec<String> = "enum",
    }
}

wire_struct! {
    /// The `items` of a [`TitledMultiSelectEnumSchema`]: `{"anyOf":[{"const","title"}…]}`.
    #[derive(Default)]
    pub struct TitledEnumItems {
        /// The options to choose from.
        req any_of: Vec<TitledEnumOption> = "anyOf",
    }
}

wire_struct! {
    /// Several choices among plain values (`UntitledMultiSelectEnumSchema`).
    #[derive(Default)]
    pub struct UntitledMultiSelectEnumSchema [tag "type" = "array"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// Minimum number of choices.
        opt min_items: u64 = "minItems",
        /// Maximum number of choices.
        opt max_items: u64 = "maxItems",
        /// The values to choose from.
        req items: UntitledEnumItems = "items",
        /// Default choices.
        opt default: Vec<String> = "default",
    }
}

wire_struct! {
    /// Several choices among labelled values (`TitledMultiSelectEnumSchema`).
    #[derive(Default)]
    pub struct TitledMultiSelectEnumSchema [tag "type" = "array"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// Minimum number of choices.
        opt min_items: u64 = "minItems",
        /// Maximum number of choices.
        opt max_items: u64 = "maxItems",
        /// The options to choose from.
        req items: TitledEnumItems = "items",
        /// Default choices.
        opt default: Vec<String> = "default",
    }
}

wire_struct! {
    /// A single choice with labels in a parallel `enumNames` array (`LegacyTitledEnumSchema`,
    /// the 2025-06-18 `EnumSchema`; deprecated in favour of [`TitledSingleSelectEnumSchema`]).
    #[derive(Default)]
    pub struct LegacyTitledEnumSchema [tag "type" = "string"] {
        /// Display title.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// The values to choose from.
        req values: Vec<String> = "enum",
        /// Labels, one per value.
        opt enum_names: Vec<String> = "enumNames",
        /// Default value.
        opt default: String = "default",
    }
}

/// What a schema object is, judged by shape.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    UntitledMulti,
    TitledMulti,
    LegacyTitled,
    Unknown,
}

impl Shape {
    fn of<E: de::Error>(object: &JsonObject) -> Result<Shape, E> {
        let kind = match object.get("type") {
            None => return Err(E::missing_field("type")),
            Some(JsonValue::String(kind)) => kind.as_str(),
            Some(_) => return Ok(Shape::Unknown),
        };
        Ok(match kind {
            "string" if object.contains_key("oneOf") => Shape::TitledSingle,
            "string" if object.contains_key("enumNames") => Shape::LegacyTitled,
            "string" if object.contains_key("enum") => Shape::UntitledSingle,
            "string" => Shape::String,
            "number" | "integer" => Shape::Number,
            "boolean" => Shape::Boolean,
            "array" => match object.get("items") {
                Some(JsonValue::Object(items)) if items.contains_key("anyOf") => Shape::TitledMulti,
                Some(JsonValue::Object(items)) if items.contains_key("enum") => Shape::UntitledMulti,
                _ => Shape::Unknown,
            },
            _ => Shape::Unknown,
        })
    }
}

/// A field of a form (`PrimitiveSchemaDefinition`): a primitive or enum schema, dispatched by
/// shape (see the module docs). A `type` this revision does not define is kept as
/// [`PrimitiveSchemaDefinition::Unknown`]; a missing `type` is an error.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// Free text.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of plain values.
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    /// One of labelled values.
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    /// Several of plain values.
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    /// Several of labelled values.
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    /// One of values labelled by `enumNames` (deprecated).
    LegacyTitledEnum(LegacyTitledEnumSchema),
    /// A schema this revision does not define, kept verbatim.
    Unknown(JsonObject),
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            PrimitiveSchemaDefinition::String(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::Number(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::Boolean(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::UntitledSingleSelectEnum(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::TitledSingleSelectEnum(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::TitledMultiSelectEnum(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => s.serialize(serializer),
            PrimitiveSchemaDefinition::Unknown(o) => o.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = strict::object(deserializer)?;
        Ok(match Shape::of(&object)? {
            Shape::String => Self::String(strict::from_object(object)?),
            Shape::Number => Self::Number(strict::from_object(object)?),
            Shape::Boolean => Self::Boolean(strict::from_object(object)?),
            Shape::UntitledSingle => Self::UntitledSingleSelectEnum(strict::from_object(object)?),
            Shape::TitledSingle => Self::TitledSingleSelectEnum(strict::from_object(object)?),
            Shape::UntitledMulti => Self::UntitledMultiSelectEnum(strict::from_object(object)?),
            Shape::TitledMulti => Self::TitledMultiSelectEnum(strict::from_object(object)?),
            Shape::LegacyTitled => Self::LegacyTitledEnum(strict::from_object(object)?),
            Shape::Unknown => Self::Unknown(object),
        })
    }
}

/// Any enum schema (`EnumSchema`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EnumSchema {
    /// One of plain values.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of labelled values.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several of plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several of labelled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One of values labelled by `enumNames` (deprecated).
    LegacyTitled(LegacyTitledEnumSchema),
}

/// A single-choice enum schema (`SingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq)]
pub enum SingleSelectEnumSchema {
    /// One of plain values.
    Untitled(UntitledSingleSelectEnumSchema),
    /// One of labelled values.
    Titled(TitledSingleSelectEnumSchema),
}

/// A multiple-choice enum schema (`MultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq)]
pub enum MultiSelectEnumSchema {
    /// Several of plain values.
    Untitled(UntitledMultiSelectEnumSchema),
    /// Several of labelled values.
    Titled(TitledMultiSelectEnumSchema),
}

/// Serialize delegating to the variant, and Deserialize by shape accepting only some shapes.
macro_rules! shape_enum_serde {
    ($name:ident, $what:literal, { $($shape:ident => $variant:ident),* $(,)? }) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $name::$variant(s) => s.serialize(serializer), )*
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let object = strict::object(deserializer)?;
                match Shape::of(&object)? {
                    $( Shape::$shape => Ok($name::$variant(strict::from_object(object)?)), )*
                    #[allow(unreachable_patterns)]
                    _ => Err(de::Error::custom(concat!("not ", $what))),
                }
            }
        }
    };
}

shape_enum_serde!(EnumSchema, "an enum schema", {
    UntitledSingle => UntitledSingleSelect,
    TitledSingle => TitledSingleSelect,
    UntitledMulti => UntitledMultiSelect,
    TitledMulti => TitledMultiSelect,
    LegacyTitled => LegacyTitled,
});
shape_enum_serde!(SingleSelectEnumSchema, "a single-select enum schema", {
    UntitledSingle => Untitled,
    TitledSingle => Titled,
});
shape_enum_serde!(MultiSelectEnumSchema, "a multi-select enum schema", {
    UntitledMulti => Untitled,
    TitledMulti => Titled,
});

macro_rules! into_primitive {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(
            impl From<$ty> for PrimitiveSchemaDefinition {
                fn from(s: $ty) -> Self {
                    PrimitiveSchemaDefinition::$variant(s)
                }
            }
        )*
    };
}

into_primitive! {
    StringSchema => String,
    NumberSchema => Number,
    BooleanSchema => Boolean,
    UntitledSingleSelectEnumSchema => UntitledSingleSelectEnum,
    TitledSingleSelectEnumSchema => TitledSingleSelectEnum,
    UntitledMultiSelectEnumSchema => UntitledMultiSelectEnum,
    TitledMultiSelectEnumSchema => TitledMultiSelectEnum,
    LegacyTitledEnumSchema => LegacyTitledEnum,
}

impl From<EnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: EnumSchema) -> Self {
        match s {
            EnumSchema::UntitledSingleSelect(s) => s.into(),
            EnumSchema::TitledSingleSelect(s) => s.into(),
            EnumSchema::UntitledMultiSelect(s) => s.into(),
            EnumSchema::TitledMultiSelect(s) => s.into(),
            EnumSchema::LegacyTitled(s) => s.into(),
        }
    }
}

impl From<SingleSelectEnumSchema> for EnumSchema {
    fn from(s: SingleSelectEnumSchema) -> Self {
        match s {
            SingleSelectEnumSchema::Untitled(s) => EnumSchema::UntitledSingleSelect(s),
            SingleSelectEnumSchema::Titled(s) => EnumSchema::TitledSingleSelect(s),
        }
    }
}

impl From<MultiSelectEnumSchema> for EnumSchema {
    fn from(s: MultiSelectEnumSchema) -> Self {
        match s {
            MultiSelectEnumSchema::Untitled(s) => EnumSchema::UntitledMultiSelect(s),
            MultiSelectEnumSchema::Titled(s) => EnumSchema::TitledMultiSelect(s),
        }
    }
}
