#!/usr/bin/env bash
# Installs or upgrades Switchyard on this host from a built checkout (run as root):
#
#   sudo deploy/install.sh              # install, or upgrade in place; then edit /etc/switchyard/switchyard.yaml
#   sudo deploy/install.sh --rollback   # point `current` back at the previous release
#
# What runs is copied into a new release directory, $PREFIX/releases/<UTC time>: each package's
# package.json and dist/ (plus the sandbox's web page), the lockfile, and production dependencies
# installed there with `pnpm install --prod --frozen-lockfile`. Nothing else: no .git, no sources or tests,
# no dev dependencies (the pinned claude-code, playwright, vitest), no local state or switchyard.yaml.
# $PREFIX/current then switches to it in one rename, so the units never see half a release; the previous
# releases stay for --rollback (the newest $KEEP are kept). Running it twice is harmless.
#
# Environment (defaults in brackets), for staging and tests:
#   SWITCHYARD_PREFIX [/opt/switchyard]   SWITCHYARD_ETC [/etc/switchyard]
#   SWITCHYARD_BIN_DIR [/usr/local/bin]   SWITCHYARD_SYSTEMD_DIR [/etc/systemd/system]
#   SWITCHYARD_NO_SYSTEM=1: no user, no systemctl, no polkit, no root check (a staging install)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
prefix="${SWITCHYARD_PREFIX:-/opt/switchyard}"
etc="${SWITCHYARD_ETC:-/etc/switchyard}"
bin_dir="${SWITCHYARD_BIN_DIR:-/usr/local/bin}"
systemd_dir="${SWITCHYARD_SYSTEMD_DIR:-/etc/systemd/system}"
system=1
[[ "${SWITCHYARD_NO_SYSTEM:-}" == 1 ]] && system=0
keep=3
pnpm=(npx -y pnpm@12.4.2)
say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 1; }

if [[ $system == 1 && $EUID -ne 0 ]]; then die "run as root (it writes /etc, /opt and the systemd units)"; fi

if [[ "${1:-}" == "--rollback" ]]; then
  current="$(readlink "$prefix/current" 2>/dev/null || true)"
  [[ -n "$current" ]] || die "nothing installed at $prefix"
  previous="$(ls -1 "$prefix/releases" | sort | awk -v cur="$(basename "$current")" '$0 < cur' | tail -n 1)"
  [[ -n "$previous" ]] || die "no release before $(basename "$current") to roll back to"
  ln -sfn "releases/$previous" "$prefix/current.new" && mv -T "$prefix/current.new" "$prefix/current"
  say "current is now $previous (was $(basename "$current"))"
  if [[ $system == 1 ]]; then say "restart the agents: systemctl restart 'switchyard-gateway@*' 'switchyard-agent@*'"; fi
  exit 0
fi

for pkg in "$root"/packages/*/; do
  [[ -d "$pkg/dist" ]] || die "build first: npx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 build ($pkg has no dist/)"
done

# 1. The release: only what runs.
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
release="$prefix/releases/$stamp"
n=1
while [[ -e "$release" ]]; do release="$prefix/releases/$stamp-$n"; n=$((n + 1)); done
mkdir -p "$release/packages"
trap 'rm -rf "$release"' ERR
cp "$root/package.json" "$root/pnpm-lock.yaml" "$release/"
# The workspace without tests/ and bench/: the lockfile still describes them, which pnpm accepts.
sed '/^  - tests$/d' "$root/pnpm-workspace.yaml" >"$release/pnpm-workspace.yaml"
for pkg in "$root"/packages/*/; do
  name="$(basename "$pkg")"
  mkdir -p "$release/packages/$name"
  cp "$pkg/package.json" "$release/packages/$name/"
  cp -R "$pkg/dist" "$release/packages/$name/dist"
  find "$release/packages/$name/dist" \( -name '*.tsbuildinfo' -o -name '*.map' \) -delete
done
mkdir -p "$release/packages/sandbox/src/telegram/web"
cp -R "$root/packages/sandbox/src/telegram/web/static" "$release/packages/sandbox/src/telegram/web/static"
cp -R "$here" "$release/deploy"
(cd "$release" && CI=1 "${pnpm[@]}" install --prod --frozen-lockfile --prefer-offline --config.confirmModulesPurge=false >/dev/null) \
  || die "pnpm install --prod failed in $release"
rm -rf "$release/tests" # pnpm links the lockfile's test importer; nothing there runs
chmod 0755 "$release/packages/cli/dist/main.js"
trap - ERR

# 2. Switch: one rename, then prune the oldest releases.
ln -sfn "releases/$(basename "$release")" "$prefix/current.new"
mv -T "$prefix/current.new" "$prefix/current"
ls -1 "$prefix/releases" | sort | head -n "-$keep" | while read -r old; do rm -rf "${prefix:?}/releases/$old"; done
say "installed $(basename "$release") at $prefix/current"

# 3. The command on PATH: a wrapper, so it always runs the current release with this host's node.
mkdir -p "$bin_dir"
cat >"$bin_dir/switchyard.new" <<WRAPPER
#!/bin/sh
exec node "$prefix/current/packages/cli/dist/main.js" "\$@"
WRAPPER
chmod 0755 "$bin_dir/switchyard.new"
mv -f "$bin_dir/switchyard.new" "$bin_dir/switchyard"

# 4. Config (never overwritten) and units (pointed at the current release).
install -d -m 0755 "$etc"
if [[ ! -f "$etc/switchyard.yaml" ]]; then
  install -m 0640 "$here/switchyard.example.yaml" "$etc/switchyard.yaml"
  [[ $system == 1 ]] && chgrp switchyard "$etc/switchyard.yaml" 2>/dev/null || true
  say "wrote $etc/switchyard.yaml: edit it, then run: switchyard --config $etc/switchyard.yaml doctor"
fi
mkdir -p "$systemd_dir"
for unit in switchyard-gateway@.service switchyard-agent@.service; do
  sed "s#/opt/switchyard/packages/#$prefix/current/packages/#g; s#/opt/switchyard/deploy/#$prefix/current/deploy/#g" \
    "$here/$unit" >"$systemd_dir/$unit.new"
  chmod 0644 "$systemd_dir/$unit.new"
  mv -f "$systemd_dir/$unit.new" "$systemd_dir/$unit"
done

if [[ $system == 1 ]]; then
  # The services' user, with a home for claude's own files (~/.claude); state lives under it too.
  if ! id switchyard >/dev/null 2>&1; then
    useradd --system --create-home --home-dir /var/lib/switchyard --shell /usr/sbin/nologin switchyard
  elif [[ ! -d /var/lib/switchyard ]]; then
    install -d -m 0750 -o switchyard -g switchyard /var/lib/switchyard
  fi
  if [[ -d /etc/polkit-1/rules.d ]]; then
    install -m 0644 "$here/50-switchyard.rules" /etc/polkit-1/rules.d/50-switchyard.rules
  fi
  systemctl daemon-reload
  # 5. What would stop an agent from starting, with its fix (the install itself is done either way).
  runuser -u switchyard -- "$bin_dir/switchyard" --config "$etc/switchyard.yaml" doctor \
    || say "fix what doctor reports, then: systemctl enable --now switchyard-gateway@NAME switchyard-agent@NAME"
  say "running agents keep the old release until restarted: systemctl restart 'switchyard-gateway@*' 'switchyard-agent@*'"
fi
say "done"
