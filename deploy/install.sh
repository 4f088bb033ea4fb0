#!/usr/bin/env bash
# Installs Switchyard as systemd services on this host (run as root from a built checkout):
#   sudo deploy/install.sh            # then edit /etc/switchyard/switchyard.yaml
#   sudo systemctl enable --now switchyard-gateway@demo switchyard-agent@demo
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
prefix="${SWITCHYARD_PREFIX:-/opt/switchyard}"

if [[ $EUID -ne 0 ]]; then echo "install.sh: run as root (it writes /etc and /etc/systemd)" >&2; exit 1; fi
if [[ ! -f "$root/packages/cli/dist/main.js" ]]; then
  echo "install.sh: build first: npx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 build" >&2
  exit 1
fi

id switchyard >/dev/null 2>&1 || useradd --system --home-dir /var/lib/switchyard --shell /usr/sbin/nologin switchyard
if [[ "$root" != "$prefix" ]]; then
  mkdir -p "$prefix"
  cp -a "$root/." "$prefix/"
fi
install -d -m 0755 /etc/switchyard
if [[ ! -f /etc/switchyard/switchyard.yaml ]]; then
  install -m 0640 -g switchyard "$here/switchyard.example.yaml" /etc/switchyard/switchyard.yaml
  echo "install.sh: wrote /etc/switchyard/switchyard.yaml — edit it, then: switchyard config check"
fi
install -m 0644 "$here/switchyard-gateway@.service" "$here/switchyard-agent@.service" /etc/systemd/system/
if [[ -d /etc/polkit-1/rules.d ]]; then
  install -m 0644 "$here/50-switchyard.rules" /etc/polkit-1/rules.d/50-switchyard.rules
fi
ln -sf "$prefix/packages/cli/dist/main.js" /usr/local/bin/switchyard
systemctl daemon-reload
sudo -u switchyard env SWITCHYARD_CONFIG=/etc/switchyard/switchyard.yaml node "$prefix/packages/cli/dist/main.js" config check >/dev/null \
  && echo "install.sh: config ok" || echo "install.sh: fix the config before starting the units" >&2
echo "install.sh: done. Start an agent: systemctl enable --now switchyard-gateway@NAME switchyard-agent@NAME"
