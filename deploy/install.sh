#!/usr/bin/env bash
# Installs or upgrades Switchyard on this host from a packed artifact (deploy/pack.sh), as root:
#
#   sudo deploy/install.sh switchyard-0.1.0-<time>.tar.gz   # install, or upgrade in place
#   sudo ./switchyard-0.1.0-<time>/deploy/install.sh         # the same, from the unpacked artifact
#   sudo deploy/install.sh                                   # from a built checkout: packs it first
#   sudo deploy/install.sh --rollback                        # point `current` back at the previous release
#
# The artifact becomes a new release directory, $PREFIX/releases/<UTC time>; nothing is built here and
# no development dependency is installed. $PREFIX/current then switches to it in one rename, so the
# units never see half a release; the previous releases stay for --rollback (the newest $KEEP are kept).
# The units and the `switchyard` command run the node this script found (SWITCHYARD_NODE, else `node`
# on PATH), by its absolute path: it must be Node 20.19 or later, of the ABI the artifact was packed for.
# Running it twice is harmless. Then add each agent with `switchyard add-agent NAME`.
# A system install needs systemd as this host's init: without it (a container, Lima) it stops before
# changing anything and says so; install with SWITCHYARD_NO_SYSTEM=1 and run agents with `switchyard run`.
#
# Environment (defaults in brackets), for staging and tests:
#   SWITCHYARD_PREFIX [/opt/switchyard]   SWITCHYARD_ETC [/etc/switchyard]
#   SWITCHYARD_BIN_DIR [/usr/local/bin]   SWITCHYARD_SYSTEMD_DIR [/etc/systemd/system]
#   SWITCHYARD_NODE [node on PATH]
#   SWITCHYARD_NO_SYSTEM=1: no user, no systemctl, no polkit, no root check (a staging install, or the
#   software alone on a host without systemd)
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
say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 1; }

if [[ $system == 1 && $EUID -ne 0 ]]; then die "run as root (it writes /etc, /opt and the systemd units)"; fi

# What a system install needs, checked before anything is changed: the units are the only way it runs
# the agents, so systemd must be this host's init (Docker, Lima and many containers run something else),
# and the tools that make the users must be there. Without systemd, say what to do instead.
if [[ $system == 1 ]]; then
  missing=""
  for tool in systemctl useradd runuser getent; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
  done
  [[ -z "$missing" ]] || die "this host lacks${missing}, which a system install needs; nothing was installed. Install them (Debian/Ubuntu: systemd, passwd, util-linux), or see \"Without systemd\" in deploy/README.md"
  if ! systemctl show --property=Version >/dev/null 2>&1; then
    die "systemd is not running on this host (PID 1 is $(cat /proc/1/comm 2>/dev/null || echo unknown)), so the units could never start; nothing was installed. Without systemd (a container, Lima), install the software alone with SWITCHYARD_NO_SYSTEM=1 $0 and run each agent in the foreground with \`switchyard run NAME\` (deploy/README.md, \"Without systemd\")"
  fi
fi

# 0. The node everything will run with, by absolute path (a unit's PATH is not the operator's).
node="${SWITCHYARD_NODE:-$(command -v node || true)}"
[[ -n "$node" && -x "$node" ]] || die "no node found: install Node 20.19 or later (deploy/README.md, \"Node\"), or set SWITCHYARD_NODE"
node="$(cd "$(dirname "$node")" && pwd)/$(basename "$node")"
"$node" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
  || die "$node is Node $("$node" -p process.versions.node); Switchyard needs 20.19 or later (deploy/README.md, \"Node\")"

# The units of a release, pointed at $prefix/current and this node. An install writes the new release's;
# a rollback the previous one's, so the units always match the code they start.
write_units() {
  mkdir -p "$systemd_dir"
  for unit in switchyard-gateway@.service switchyard-agent@.service switchyard-link@.service; do
    # A release from before the link unit has none: a rollback to it leaves none behind.
    if [[ ! -f "$1/deploy/$unit" ]]; then rm -f "$systemd_dir/$unit"; continue; fi
    sed "s#/usr/bin/env node #$node #g; s#/opt/switchyard/packages/#$prefix/current/packages/#g; s#/opt/switchyard/deploy/#$prefix/current/deploy/#g" \
      "$1/deploy/$unit" >"$systemd_dir/$unit.new"
    chmod 0644 "$systemd_dir/$unit.new"
    mv -f "$systemd_dir/$unit.new" "$systemd_dir/$unit"
  done
  if [[ $system == 1 ]]; then systemctl daemon-reload; fi
}

if [[ "${1:-}" == "--rollback" ]]; then
  current="$(readlink "$prefix/current" 2>/dev/null || true)"
  [[ -n "$current" ]] || die "nothing installed at $prefix"
  previous="$(ls -1 "$prefix/releases" | sort | awk -v cur="$(basename "$current")" '$0 < cur' | tail -n 1)"
  [[ -n "$previous" ]] || die "no release before $(basename "$current") to roll back to"
  ln -sfn "releases/$previous" "$prefix/current.new" && mv -T "$prefix/current.new" "$prefix/current"
  write_units "$prefix/releases/$previous"
  say "current is now $previous (was $(basename "$current")), and so are the units"
  if [[ $system == 1 ]]; then say "restart the agents: systemctl restart 'switchyard-gateway@*' 'switchyard-agent@*'"; fi
  exit 0
fi

# 1. The artifact: given, the tree this script is in, or packed now from this checkout.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifact="${1:-}"
if [[ -z "$artifact" && ! -f "$root/RELEASE" ]]; then
  say "no artifact given: packing this checkout (deploy/pack.sh)"
  artifact="$("$here/pack.sh" "$work")"
fi
if [[ -n "$artifact" ]]; then
  [[ -f "$artifact" ]] || die "no such artifact: $artifact"
  tar -xzf "$artifact" -C "$work"
  tree="$(find "$work" -mindepth 2 -maxdepth 2 -name RELEASE -printf '%h\n' | head -n 1)"
  [[ -n "$tree" ]] || die "$artifact is not a Switchyard artifact (no RELEASE): make one with deploy/pack.sh"
else
  tree="$root"
fi
packed_abi="$(sed -n 's/^nodeAbi=//p' "$tree/RELEASE")"
packed_platform="$(sed -n 's/^platform=//p' "$tree/RELEASE")"
host_abi="$("$node" -p process.versions.modules)"
host_platform="$("$node" -p 'process.platform + "-" + process.arch')"
if [[ "$packed_abi" != "$host_abi" || "$packed_platform" != "$host_platform" ]]; then
  die "this artifact was packed for Node ABI $packed_abi on $packed_platform, this host's $node is ABI $host_abi on $host_platform: pack it with the same Node major on the same kind of host"
fi

# 2. The release, then the switch: one rename, then prune the oldest releases.
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
release="$prefix/releases/$stamp"
n=1
while [[ -e "$release" ]]; do release="$prefix/releases/$stamp-$n"; n=$((n + 1)); done
mkdir -p "$prefix/releases"
trap 'rm -rf "$work" "$release"' ERR
cp -a "$tree" "$release"
trap - ERR
ln -sfn "releases/$(basename "$release")" "$prefix/current.new"
mv -T "$prefix/current.new" "$prefix/current"
ls -1 "$prefix/releases" | sort | head -n "-$keep" | while read -r old; do rm -rf "${prefix:?}/releases/$old"; done
say "installed $(sed -n 's/^name=//p' "$release/RELEASE") as $(basename "$release") at $prefix/current"

# 3. The command on PATH: the current release, this node, this host's config unless told otherwise.
mkdir -p "$bin_dir"
cat >"$bin_dir/switchyard.new" <<WRAPPER
#!/bin/sh
: "\${SWITCHYARD_CONFIG:=$etc/switchyard.yaml}"
export SWITCHYARD_CONFIG
exec "$node" "$prefix/current/packages/cli/dist/main.js" "\$@"
WRAPPER
chmod 0755 "$bin_dir/switchyard.new"
mv -f "$bin_dir/switchyard.new" "$bin_dir/switchyard"

# 4. The gateways' user and group first: the config below is group switchyard. /var/lib/switchyard holds
# each agent's state directory, each 0700 (or 2770 for the exchange directory): the parent is 0755 so an
# agent's user reaches its own home in there.
if [[ $system == 1 ]]; then
  if ! id switchyard >/dev/null 2>&1; then
    useradd --system --user-group --home-dir /var/lib/switchyard --no-create-home --shell /usr/sbin/nologin switchyard
  fi
  install -d -m 0755 /var/lib/switchyard
  chmod 0755 /var/lib/switchyard
fi

# 5. Config (never overwritten) and units (pointed at the current release and this node).
install -d -m 0755 "$etc"
if [[ ! -f "$etc/switchyard.yaml" ]]; then
  install -m 0640 "$release/deploy/switchyard.example.yaml" "$etc/switchyard.yaml"
  if [[ $system == 1 ]]; then chgrp switchyard "$etc/switchyard.yaml"; fi
  say "wrote the example config $etc/switchyard.yaml (agent \"demo\"): edit it, or add your agent with add-agent"
fi
if [[ $system == 1 && -d /etc/polkit-1/rules.d ]]; then
  install -m 0644 "$release/deploy/50-switchyard.rules" /etc/polkit-1/rules.d/50-switchyard.rules
fi
write_units "$release"

if [[ $system == 1 ]]; then
  # 6. What would stop an agent from starting, checked as each agent's own user (as its bridge runs).
  agents="$(getent passwd | awk -F: '$1 ~ /^sy-/ { print substr($1, 4) }')"
  if [[ -z "$agents" ]]; then
    say "no agent yet: sudo switchyard add-agent NAME --allow YOUR_TELEGRAM_USER_ID (it asks for the bot token)"
  fi
  for agent in $agents; do
    home="$(getent passwd "sy-$agent" | cut -d: -f6)"
    runuser -u "sy-$agent" -g "sy-$agent" -G switchyard -- env HOME="$home" \
      "$bin_dir/switchyard" --config "$etc/switchyard.yaml" doctor "$agent" \
      || say "fix what doctor reports for $agent (sudo switchyard add-agent $agent keeps what is done)"
  done
  say "running agents keep the old release until restarted: systemctl restart 'switchyard-gateway@*' 'switchyard-agent@*'"
fi
say "done"
