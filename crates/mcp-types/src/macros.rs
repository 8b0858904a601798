//! The one macro that defines wire objects.
//!
//! Every MCP object is an open JSON object: peers may add `_meta` keys, extension fields or
//! members of a newer revision, and a faithful implementation must carry them through unchanged.
//! `serde(flatten)` would do that, but it buffers every object into an intermediate tree and
//! silently keeps the last of duplicate keys. [`wire_struct!`] instead generates a direct
//! map visitor that
//!
//! * matches known members by their wire name,
//! * rejects a duplicate member (known or unknown) — docs/DECISIONS.md trap 5: the body checked
//!   against HTTP headers and the body dispatched must never differ,
//! * keeps every unknown member in `extra`,
//! * treats an explicit `null` for an optional member as absent (lenient on input, never
//!   produced on output),
//! * optionally checks and emits a constant discriminator member (`"type": "text"`).

/// Defines a wire struct with known members plus an `extra` map for everything else.
///
/// ```text
/// wire_struct! {
///     /// Doc.
///     pub struct TextContent [tag "type" = "text"] {
///         /// The text.
///         req text: String = "text",
///         /// Optional annotations.
///         opt annotations: Annotations = "annotations",
///     }
/// }
/// ```
///
/// `req` members are required on input; `opt` members become `Option<T>` and are skipped on
/// output when `None`; `text` members are required `String`s written through
/// [`json::Text`](crate::json::Text) (for members that may carry a large text).
#[macro_export]
#[doc(hidden)]
macro_rules! wire_struct {
    (
        $(#[$smeta:meta])*
        pub struct $name:ident $([tag $tagkey:literal = $tagval:literal])? {
            $(
                $(#[$fmeta:meta])*
                $kind:ident $field:ident : $ty:ty = $wire:literal
            ),* $(,)?
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $crate::wire_struct!(@ty $kind $ty), )*
            /// Members this type does not model (extensions, newer revisions), kept so
            /// that they round-trip unchanged.
            pub extra: $crate::JsonObject,
        }

        impl $name {
            /// The wire names of the members this type models.
            pub const KNOWN_MEMBERS: &'static [&'static str] = &[$($tagkey,)? $($wire),*];
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                $( map.serialize_entry($tagkey, $tagval)?; )?
                $( $crate::wire_struct!(@ser map $kind self.$field, $wire); )*
                for (key, value) in &self.extra {
                    if !Self::KNOWN_MEMBERS.contains(&key.as_str()) {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::core::result::Result<Self, D::Error> {
                struct Visitor;
                impl<'de> ::serde::de::Visitor<'de> for Visitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " object"))
                    }
                    #[allow(unused_mut)]
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> ::core::result::Result<$name, A::Error> {
                        use ::serde::de::Error as _;
                        $( let mut $field: ::core::option::Option<$crate::wire_struct!(@slot $kind $ty)> = None; )*
                        $( let mut tag_seen: bool = { let _ = $tagkey; false }; )?
                        let mut extra = $crate::JsonObject::new();
                        while let Some(key) = map.next_key::<$crate::__private::MapKey<'de>>()? {
                            match key.as_str() {
                                $(
                                    $tagkey => {
                                        if tag_seen {
                                            return Err(A::Error::duplicate_field($tagkey));
                                        }
                                        tag_seen = true;
                                        let value: $crate::__private::MapKey<'de> = map.next_value()?;
                                        if value.as_str() != $tagval {
                                            return Err(A::Error::invalid_value(
                                                ::serde::de::Unexpected::Str(value.as_str()),
                                                &concat!("\"", $tagval, "\""),
                                            ));
                                        }
                                    }
                                )?
                                $(
                                    $wire => {
                                        if $field.is_some() {
                                            return Err(A::Error::duplicate_field($wire));
                                        }
                                        $field = Some(map.next_value()?);
                                    }
                                )*
                                other => {
                                    $crate::__private::note_unknown_member(other);
                                    let value: ::serde_json::Value = map.next_value()?;
                                    if extra.insert(other.to_owned(), value).is_some() {
                                        return Err(A::Error::custom(format_args!("duplicate field `{other}`")));
                                    }
                                }
                            }
                        }
                        $( if !tag_seen { return Err(A::Error::missing_field($tagkey)); } )?
                        Ok($name {
                            $( $field: $crate::wire_struct!(@finish $kind $field, $wire), )*
                            extra,
                        })
                    }
                }
                deserializer.deserialize_map(Visitor)
            }
        }
    };
    (@ty req $ty:ty) => { $ty };
    (@ty opt $ty:ty) => { ::core::option::Option<$ty> };
    (@ty text $ty:ty) => { $ty };
    (@slot req $ty:ty) => { $ty };
    (@slot opt $ty:ty) => { ::core::option::Option<$ty> };
    (@slot text $ty:ty) => { $ty };
    (@ser $map:ident req $val:expr, $wire:literal) => { $map.serialize_entry($wire, &$val)?; };
    (@ser $map:ident text $val:expr, $wire:literal) => {
        $map.serialize_entry($wire, &$crate::json::Text(&$val))?;
    };
    (@ser $map:ident opt $val:expr, $wire:literal) => {
        if let Some(value) = &$val { $map.serialize_entry($wire, value)?; }
    };
    (@finish req $f:ident, $wire:literal) => {
        match $f { Some(value) => value, None => return Err(A::Error::missing_field($wire)) }
    };
    (@finish opt $f:ident, $wire:literal) => { $f.flatten() };
    (@finish text $f:ident, $wire:literal) => {
        match $f { Some(value) => value, None => return Err(A::Error::missing_field($wire)) }
    };
}

/// Defines a string enum whose unknown values are kept (`Other(String)`), so that decoding a
/// value from a newer revision never fails and re-encodes unchanged.
#[macro_export]
#[doc(hidden)]
macro_rules! open_enum {
    (
        $(#[$emeta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal ),* $(,)?
        }
    ) => {
        $(#[$emeta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this revision does not define, kept verbatim.
            Other(::std::string::String),
        }

        impl $name {
            /// The wire string of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )*
                    Self::Other(other) => other.as_str(),
                }
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = ::core::convert::Infallible;
            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                Ok(match s {
                    $( $wire => Self::$variant, )*
                    other => Self::Other(other.to_owned()),
                })
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::core::result::Result<Self, D::Error> {
                let key = <$crate::__private::MapKey<'de> as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(match key.as_str() {
                    $( $wire => Self::$variant, )*
                    other => Self::Other(other.to_owned()),
                })
            }
        }
    };
}
