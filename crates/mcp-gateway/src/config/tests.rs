//! Tests of the configuration reader.
