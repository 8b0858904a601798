#!/usr/bin/env bash
# Every optional feature of every publishable library crate, alone and with none: lint-clean and
# its tests pass. The full default set is what the workspace test run covers; this covers the
# rest, so a crate that only builds with its defaults (or with a neighbour's features unified in)
# fails here. Features are read from `cargo metadata`, so a feature added later is covered with no
# change to this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# "crate feature" lines: each publishable library crate with optional features, once with the
# marker "(none)" and once per feature other than `default`.
combos=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
meta = json.load(sys.stdin)
for package in meta["packages"]:
    if package.get("publish") == []:  # publish = false
        continue
    if not any("lib" in target["kind"] for target in package["targets"]):
        continue
    features = sorted(f for f in package["features"] if f != "default")
    if not features:
        continue
    print(package["name"], "(none)")
    for feature in features:
        # A feature that alone is the default set builds exactly what the workspace run tests.
        if package["features"].get("default") == [feature]:
            continue
        print(package["name"], feature)
')

if [ -z "$combos" ]; then
  echo "no library crate has optional features"
  exit 0
fi

target_dir=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
deps="$target_dir/debug/deps"
marker=$(mktemp)
trap 'rm -f "$marker"' EXIT
while read -r crate feature; do
  touch "$marker"
  if [ "$feature" = "(none)" ]; then
    args=(--no-default-features)
  else
    args=(--no-default-features --features "$feature")
  fi
  echo "-- $crate ${args[*]}"
  cargo clippy -p "$crate" "${args[@]}" --all-targets --locked --quiet -- -D warnings
  cargo test -p "$crate" "${args[@]}" --locked --quiet
  # On CI, this combination's test binaries go once they have passed: with features the
  # workspace run never unifies, no later build reuses them, and together they took 1.6 GB.
  if [ "${CI:-}" = "true" ]; then
    find "$deps" -maxdepth 1 -type f -perm -u+x ! -name "*.*" -newer "$marker" -delete
  fi
done <<<"$combos"
