#!/usr/bin/env bash
# The project's test command: everything CI runs, on a fresh machine, from nothing but a Rust
# toolchain and python3 (the repository alone: nothing beside it is read). `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# The specification data (schemas and examples) the tests check against lives in spec/;
# MCPKIT_SPEC_DIR can point at another copy of the same layout.
export MCPKIT_SPEC_DIR="${MCPKIT_SPEC_DIR:-$(pwd)/spec}"
if [ ! -f "$MCPKIT_SPEC_DIR/2026-07-28/schema.json" ]; then
  echo "error: the MCP specification was not found at $MCPKIT_SPEC_DIR (set MCPKIT_SPEC_DIR)" >&2
  exit 2
fi

# On CI the checkout is fresh and built once, on a machine whose free disk is not known (a run
# once failed with the linker killed by SIGBUS, its output file mapped on a full disk): no
# incremental compilation data, and test binaries with neither line tables nor a symbol table
# (a third of each; a test's panic still names its file and line, only a backtrace, which CI
# does not print, would use them). Each phase below also removes what only it needs once it has
# passed (check-features.sh: its test binaries; the fuzz targets' check). The build took 7.6 GB
# before, 4.6 GB with the first two, and the run prints what it took at its end.
if [ "${CI:-}" = "true" ]; then
  export CARGO_INCREMENTAL=0
  export CARGO_PROFILE_DEV_DEBUG=false
  export CARGO_PROFILE_DEV_STRIP=symbols
fi

echo "== format"
cargo fmt --all -- --check
echo "== lint"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== architecture invariants"
bash scripts/check-architecture.sh
echo "== every feature of the library crates, alone and with none"
bash scripts/check-features.sh
echo "== mcp-http without OAuth: builds, and links neither reqwest nor mcp-auth"
cargo check -p mcp-http --no-default-features --locked --quiet
if cargo tree -p mcp-http --no-default-features -e normal --locked --prefix none | grep -E '^(reqwest|mcp-auth) '; then
  echo "error: mcp-http without the oauth feature still depends on the above" >&2
  exit 1
fi
echo "== the library crates package"
bash scripts/check-package.sh
echo "== fuzz targets compile"
cargo check --manifest-path fuzz/Cargo.toml --locked --quiet
if [ "${CI:-}" = "true" ]; then rm -rf fuzz/target; fi
echo "== interop SDK clients (official Python/TypeScript SDKs, into .cache/)"
bash scripts/setup-interop.sh
echo "== Prometheus and promtool (Debian's package, for tests/observability.rs)"
bash scripts/setup-prometheus.sh
echo "== tests"
cargo test --workspace --locked
echo "== disk taken by the build"
du -sh "${CARGO_TARGET_DIR:-target}" 2>/dev/null || true
