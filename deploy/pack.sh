#!/usr/bin/env bash
# Packs the production artifact of Switchyard from a built checkout, on a build machine (a developer's,
# CI), so that the hosts that run it never build anything:
#
#   npx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 build
#   deploy/pack.sh [OUT_DIR]        # prints the path of OUT_DIR/switchyard-<version>-<UTC time>.tar.gz
#
# The tarball holds one directory with only what runs: each package's package.json and dist/ (plus the
# sandbox's web page), the lockfile, deploy/ (this script, install.sh, uninstall.sh, the units), the
# production dependencies installed with `pnpm install --prod --frozen-lockfile`, and RELEASE (what it is
# and which Node it was packed with). No .git, sources, tests, benches or dev dependencies.
#
# better-sqlite3 is a native module: its binary matches the Node ABI and platform it was packed on, so
# pack with the same Node major and OS/architecture as the hosts (install.sh refuses a mismatch).
# Needs: bash, tar, gzip, node, and the npm registry (or pnpm's store) for the production dependencies.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/artifacts}"
node="${SWITCHYARD_NODE:-$(command -v node || true)}"
pnpm=(npx -y pnpm@12.4.2)
say() { echo "pack.sh: $*" >&2; }
die() { echo "pack.sh: $*" >&2; exit 1; }

[[ -n "$node" ]] || die "no node on PATH (set SWITCHYARD_NODE)"
for pkg in "$root"/packages/*/; do
  [[ -d "$pkg/dist" ]] || die "build first: npx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 build ($pkg has no dist/)"
done

version="$("$node" -p "require('$root/packages/cli/package.json').version")"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
name="switchyard-$version-$stamp"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
tree="$stage/$name"
mkdir -p "$tree/packages"

cp "$root/package.json" "$root/pnpm-lock.yaml" "$tree/"
# The workspace without tests/ and bench/: the lockfile still describes them, which pnpm accepts.
sed '/^  - tests$/d' "$root/pnpm-workspace.yaml" >"$tree/pnpm-workspace.yaml"
for pkg in "$root"/packages/*/; do
  pkg_name="$(basename "$pkg")"
  mkdir -p "$tree/packages/$pkg_name"
  cp "$pkg/package.json" "$tree/packages/$pkg_name/"
  cp -R "$pkg/dist" "$tree/packages/$pkg_name/dist"
  find "$tree/packages/$pkg_name/dist" \( -name '*.tsbuildinfo' -o -name '*.map' \) -delete
done
mkdir -p "$tree/packages/sandbox/src/telegram/web"
cp -R "$root/packages/sandbox/src/telegram/web/static" "$tree/packages/sandbox/src/telegram/web/static"
mkdir -p "$tree/deploy"
cp "$here"/*.sh "$here"/*.service "$here"/*.rules "$here"/*.yaml "$here"/README.md "$tree/deploy/"
say "installing production dependencies"
# Copied, not hard-linked from pnpm's store: a store file is shared with every other install on the host, and
# one of them touching it while tar reads the stage fails the pack ("file changed as we read it"; seen with
# two packs at once).
(cd "$tree" && CI=1 "${pnpm[@]}" install --prod --frozen-lockfile --prefer-offline --config.confirmModulesPurge=false \
  --config.package-import-method=copy >/dev/null) \
  || die "pnpm install --prod failed in $tree"
rm -rf "$tree/tests" # pnpm links the lockfile's test importer; nothing there runs
chmod 0755 "$tree/packages/cli/dist/main.js"

commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$node" -e '
  const [name, version, commit] = process.argv.slice(1);
  const lines = { name, version, commit, node: process.versions.node, nodeAbi: process.versions.modules,
                  platform: `${process.platform}-${process.arch}` };
  process.stdout.write(Object.entries(lines).map(([k, v]) => `${k}=${v}`).join("\n") + "\n");
' "$name" "$version" "$commit" >"$tree/RELEASE"

mkdir -p "$out"
tar -C "$stage" -czf "$out/$name.tar.gz.tmp" "$name"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
say "packed $(du -h "$out/$name.tar.gz" | cut -f1) for Node $("$node" -p process.versions.node) ($("$node" -p 'process.platform + "-" + process.arch'))"
echo "$out/$name.tar.gz"
