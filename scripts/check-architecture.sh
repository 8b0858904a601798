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
