//! A gateway: one MCP endpoint in front of many MCP servers (upstreams) of any protocol era and
//! transport.

#![warn(missing_docs)]

pub mod config;
