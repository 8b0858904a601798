#!/usr/bin/env bash
# Architecture invariants (docs/ARCHITECTURE.md), checked mechanically.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0

# Invariant: mcp-types does IO-free, async-free work — it never depends on tokio, hyper,
# reqwest, axum or any other runtime crate, directly or transitively.
deps=$(cargo tree -p mcp-types -e normal --prefix none --locked | sed 's/ .*//' | sort -u)
for forbidden in tokio hyper reqwest axum tower mio futures async-trait anyhow; do
  if grep -qx "$forbidden" <<<"$deps"; then
    echo "invariant broken: mcp-types depends on $forbidden" >&2
    fail=1
  fi
done

# Invariant: mcp-auth decides, it never does IO: no runtime, no HTTP client, no server.
deps=$(cargo tree -p mcp-auth -e normal --prefix none --locked | sed 's/ .*//' | sort -u)
for forbidden in tokio hyper reqwest axum tower mio futures async-trait anyhow; do
  if grep -qx "$forbidden" <<<"$deps"; then
    echo "invariant broken: mcp-auth depends on $forbidden" >&2
    fail=1
  fi
done

# Invariant: anyhow only in the binary crate.
for manifest in crates/*/Cargo.toml; do
  case "$manifest" in crates/mcpkit/*) continue ;; esac
  if grep -q '^anyhow' "$manifest"; then
    echo "invariant broken: $manifest depends on anyhow" >&2
    fail=1
  fi
done

# Invariant: no unsafe code anywhere (also forbidden by the workspace lint).
if grep -rn --include='*.rs' -E '\bunsafe\s*(\{|fn|impl)' crates fuzz/fuzz_targets; then
  echo "invariant broken: unsafe code" >&2
  fail=1
fi

# Invariant: files fit in a head.
while IFS= read -r f; do
  n=$(wc -l <"$f")
  if [ "$n" -gt 1000 ]; then
    echo "invariant broken: $f has $n lines (split it along its concepts)" >&2
    fail=1
  fi
done < <(find crates -name '*.rs')

# Invariant: mcp-server's modules form layers (docs/ARCHITECTURE.md, "mcp-server's layers"): a
# module names only modules below it in this order, bottom first, so they form no cycle. Modules
# name each other by path (`crate::module::Item`), never through the crate root's re-exports
# (`crate::Item` would hide which module it comes from). Comments (doc links) and unit-test
# modules are not part of the layering; a module missing from the list fails, so a new one is
# placed on purpose.
layers="trust hash observe rate sink schema uri_template principal policy interest session connection request_state task door::classify door::reply
        context call extract peer handler task_relay
        tools completion resources prompts skills
        config server
        router
        door stdio_pipes stdio"
server_src=crates/mcp-server/src
while IFS= read -r f; do
  rel=${f#"$server_src"/}
  case "$rel" in
    lib.rs | *tests.rs) continue ;;
    door/classify.rs | door/reply.rs) unit="door::${rel#door/}" unit=${unit%.rs} ;;
    */*) unit=${rel%%/*} ;;
    *) unit=${rel%.rs} ;;
  esac
  if ! hits=$(awk -v unit="$unit" -v layers="$layers" -v file="$f" '
    BEGIN {
      n = split(layers, order, /[ \n]+/); for (i = 1; i <= n; i++) if (order[i] != "") rank[order[i]] = i
      if (!(unit in rank)) { printf "%s: module %s is not placed in the layers\n", file, unit; bad = 1; exit }
    }
    /^[ \t]*#\[cfg\(test\)\]/ { cfg_test = 1; next }
    cfg_test && /^[ \t]*(pub(\([a-z]+\))? )?mod [a-z_]+/ { exit }
    { cfg_test = 0 }
    {
      line = $0
      sub(/^[ \t]*\/\/.*/, "", line)
      sub(/[ \t]\/\/.*/, "", line)
      while (match(line, /(crate|super)::(\{|[A-Za-z_][A-Za-z0-9_]*(::[a-z_][a-z0-9_]*)?)/)) {
        ref = substr(line, RSTART, RLENGTH)
        line = substr(line, RSTART + RLENGTH)
        if (ref ~ /^super::/) {
          if (unit !~ /::/) continue
          target = unit; sub(/::.*/, "", target)
        } else {
          target = substr(ref, 8)
          if (target ~ /^[{A-Z]/) { printf "%s:%d: names an item through the crate root (%s): name its module\n", file, NR, ref; bad = 1; continue }
          if (target !~ /^door::(classify|reply)$/) sub(/::.*/, "", target)
        }
        if (!(target in rank)) { printf "%s:%d: %s is not placed in the layers\n", file, NR, target; bad = 1; continue }
        if (target != unit && rank[target] > rank[unit]) { printf "%s:%d: %s names %s, which is above it\n", file, NR, unit, target; bad = 1 }
      }
    }
    END { exit bad }' "$f"); then
    echo "invariant broken: mcp-server's layers (docs/ARCHITECTURE.md):" >&2
    echo "$hits" >&2
    fail=1
  fi
done < <(find "$server_src" -name '*.rs' | sort)

# Invariant: the repository stands alone. Nothing tracked refers to the team's working folder
# beside the repository, climbs out of the repository, or names a machine's absolute path; every
# document a comment or doc cites is one the repository has. (This file is the only one allowed
# to spell the patterns.)
tracked=$(git ls-files -- . ':!scripts/check-architecture.sh' 2>/dev/null || true)
if [ -n "$tracked" ]; then
  # shellcheck disable=SC2086
  if hits=$(grep -nIE '\.\./shared|\bshared/(spec|peers|DECISIONS|CONFORMANCE|STYLE)' $tracked); then
    echo "invariant broken: these lines refer to a folder outside the repository:" >&2
    echo "$hits" >&2
    fail=1
  fi
  # shellcheck disable=SC2086
  if hits=$(grep -nIE '"\.\./\.\./\.\.(/|")|join\("\.\./\.\./\.\.|(^|[^A-Za-z0-9_./:])/(work|root|home)/[A-Za-z]' $tracked); then
    echo "invariant broken: these lines read a path outside the repository:" >&2
    echo "$hits" >&2
    fail=1
  fi
  for doc in DECISIONS CONFORMANCE STYLE ARCHITECTURE PERFORMANCE OPERATIONS; do
    # shellcheck disable=SC2086
    if grep -qIE "\b$doc\.md" $tracked && [ ! -f "docs/$doc.md" ]; then
      echo "invariant broken: $doc.md is cited but docs/$doc.md does not exist:" >&2
      # shellcheck disable=SC2086
      grep -nIE "\b$doc\.md" $tracked >&2
      fail=1
    fi
  done
else
  echo "invariant not checked: not a git checkout (the self-containment check reads git ls-files)" >&2
fi

exit $fail
