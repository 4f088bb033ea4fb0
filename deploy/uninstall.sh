#!/usr/bin/env bash
# Removes Switchyard from this host (run as root):
#
#   sudo /opt/switchyard/current/deploy/uninstall.sh           # the software; keeps config, tokens, state
#   sudo /opt/switchyard/current/deploy/uninstall.sh --purge   # also config, tokens, state and users
#
# Always: every switchyard-gateway@/switchyard-agent@ unit is stopped and disabled (stopping an agent
# unit ends its Claude processes, see deploy/README.md), then the units, the polkit rule, the
# `switchyard` command and $PREFIX (every release) are removed.
# Kept unless --purge: $ETC (switchyard.yaml, credentials/), /var/lib/switchyard (the gateways' SQLite,
# the conversations' records, each agent's Claude login and transcripts), the users switchyard and
# sy-NAME. --purge removes those too. Never removed: the agents' working directories (their work is
# yours); they are listed at the end.
#
# Without systemd running (a container) there are no units to stop: it says so and removes the rest.
#
# Environment: the same as install.sh (SWITCHYARD_PREFIX, SWITCHYARD_ETC, SWITCHYARD_BIN_DIR,
# SWITCHYARD_SYSTEMD_DIR, SWITCHYARD_NO_SYSTEM=1 for a staging install).
set -euo pipefail
prefix="${SWITCHYARD_PREFIX:-/opt/switchyard}"
etc="${SWITCHYARD_ETC:-/etc/switchyard}"
bin_dir="${SWITCHYARD_BIN_DIR:-/usr/local/bin}"
systemd_dir="${SWITCHYARD_SYSTEMD_DIR:-/etc/systemd/system}"
system=1
[[ "${SWITCHYARD_NO_SYSTEM:-}" == 1 ]] && system=0
purge=0
[[ "${1:-}" == "--purge" ]] && purge=1
say() { echo "uninstall.sh: $*"; }
die() { echo "uninstall.sh: $*" >&2; exit 1; }

if [[ $system == 1 && $EUID -ne 0 ]]; then die "run as root (it stops units and removes /opt and /etc files)"; fi

# The agents' working directories, read before the config goes, to name them at the end.
work_dirs=""
if [[ -f "$etc/switchyard.yaml" ]]; then
  work_dirs="$(sed -n 's/^[[:space:]]*workDir:[[:space:]]*\([^#[:space:]]*\).*/\1/p' "$etc/switchyard.yaml" | sort -u)"
fi

# Only a running systemd has units to stop: on a host without it (a container) there is nothing to
# stop, and the files are removed all the same.
manager=0
if [[ $system == 1 ]]; then
  if command -v systemctl >/dev/null 2>&1 && systemctl show --property=Version >/dev/null 2>&1; then
    manager=1
  else
    say "systemd is not running on this host: no unit to stop or disable (stop any \`switchyard run\` yourself); removing the files"
  fi
fi
if [[ $manager == 1 ]]; then
  units="$( (systemctl list-units --all --plain --no-legend 'switchyard-gateway@*' 'switchyard-agent@*' 'switchyard-link@*' | awk '{ print $1 }'
    systemctl list-unit-files --plain --no-legend 'switchyard-gateway@*' 'switchyard-agent@*' 'switchyard-link@*' | awk '$1 ~ /@.+\./ { print $1 }'
    ls "$systemd_dir"/*.wants/ 2>/dev/null | grep -E '^switchyard-(gateway|agent|link)@.+\.service$') | sort -u)"
  for unit in $units; do
    systemctl disable --now "$unit" >/dev/null 2>&1 && say "stopped and disabled $unit" || true
  done
fi
rm -f "$systemd_dir/switchyard-gateway@.service" "$systemd_dir/switchyard-agent@.service" "$systemd_dir/switchyard-link@.service"
find "$systemd_dir" -path '*.wants/switchyard-*@*.service' -delete 2>/dev/null || true
if [[ $system == 1 ]]; then rm -f /etc/polkit-1/rules.d/50-switchyard.rules; fi
if [[ $manager == 1 ]]; then systemctl daemon-reload; fi
rm -f "$bin_dir/switchyard"
rm -rf "${prefix:?}/releases" "${prefix:?}/current" "${prefix:?}/current.new"
rmdir "$prefix" 2>/dev/null || true
say "removed the units, the switchyard command and $prefix"

if [[ $purge == 1 ]]; then
  rm -rf "${etc:?}"
  say "removed $etc (config and bot tokens)"
  if [[ $system == 1 ]]; then
    rm -rf /var/lib/switchyard /run/switchyard
    say "removed /var/lib/switchyard and /run/switchyard (state, Claude logins and transcripts)"
    for user in $(getent passwd | awk -F: '$1 ~ /^sy-/ || $1 == "switchyard" { print $1 }'); do
      userdel "$user" && say "removed user $user"
    done
  fi
else
  say "kept $etc (config, credentials/) and the agents' state, logins and users: --purge removes them"
fi
if [[ -n "$work_dirs" ]]; then
  say "not touched, the agents' working directories: $(echo $work_dirs)"
fi
say "done"
