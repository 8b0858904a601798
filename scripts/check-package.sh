#!/usr/bin/env bash
# The library crates are ready to publish: each has the metadata crates.io shows (description,
# licence, readme, keywords, categories), depends on its workspace neighbours by version as well
# as by path, and packages from its own folder alone (`cargo package`, which also fails on a
# readme or an included file outside the crate). They are packaged together, so that a crate's
# unpublished workspace dependencies resolve to the ones packaged beside it rather than to
# crates.io (where unrelated crates of the same names exist).
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
crates=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
meta = json.load(sys.stdin)
members = {p["name"] for p in meta["packages"]}
bad = []
for package in meta["packages"]:
    if package.get("publish") == []:  # publish = false: tests, tools, the binary
        continue
    if not any("lib" in target["kind"] for target in package["targets"]):
        continue
    name = package["name"]
    for field in ("description", "license", "readme"):
        if not package.get(field):
            bad.append(f"{name}: no {field}")
    for field in ("keywords", "categories"):
        if not package.get(field):
            bad.append(f"{name}: no {field}")
    for dep in package["dependencies"]:
        if dep["name"] in members and dep["kind"] != "dev" and dep["req"] == "*":
            bad.append(f"{name}: depends on {dep['"'"'name'"'"']} by path only (add a version)")
    print(name)
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
')

args=()
for crate in $crates; do args+=(-p "$crate"); done
echo "packaging: $(echo $crates)"
cargo package "${args[@]}" --no-verify --locked --allow-dirty --quiet

for crate in $crates; do
  file=$(ls "$target_dir"/package/"$crate"-*.crate | sort -V | tail -1)
  listing=$(tar tzf "$file")
  for needed in Cargo.toml README.md LICENSE src/lib.rs; do
    if ! grep -qx "[^/]*/$needed" <<<"$listing"; then
      echo "package $file lacks $needed" >&2
      exit 1
    fi
  done
done
echo "every library crate packages: $(echo $crates)"
