#!/bin/bash
# porter, the game store's delivery connector, installed into this panel server's folder
# (/mnt/server here, /home/container when the server runs) from porter's release at
# PORTER_RELEASE_URL: the single executable for this machine's architecture, checked against the
# release's SHA256SUMS, saved as ./porter. "Reinstall" runs this again: point PORTER_RELEASE_URL
# at a newer release (or a mirror of one) and reinstall to update. No secret is written anywhere:
# the panel hands the API token and the console password to porter as environment variables.
# The egg carries this file as its installation script (scripts/release/egg.mjs).
set -euo pipefail
cd /mnt/server

base="${PORTER_RELEASE_URL%/}"
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *)
    echo "porter: this machine is $(uname -m), and porter's release has executables for x86_64 and aarch64 only: run porter on an x86_64 or aarch64 node"
    exit 1
    ;;
esac

fetch() {
  # No progress meter on the console, but a failed download says why.
  curl --fail --location --silent --show-error --retry 3 --output "$2" "$1"
}

echo "porter: fetching ${base}/SHA256SUMS"
if ! fetch "${base}/SHA256SUMS" .porter-SHA256SUMS; then
  echo "porter: could not download ${base}/SHA256SUMS: set PORTER_RELEASE_URL to the folder of a porter release (its default is this egg's release), then reinstall"
  exit 1
fi
# The release's line for this architecture's executable: "<sha256>  porter-<version>-linux-<arch>".
line=$(grep -E "^[0-9a-f]{64}  porter-[0-9A-Za-z.+-]+-linux-${arch}\$" .porter-SHA256SUMS || true)
rm -f .porter-SHA256SUMS
if [ "$(printf '%s\n' "${line}" | grep -c .)" != 1 ]; then
  echo "porter: ${base}/SHA256SUMS lists no single porter-<version>-linux-${arch}: PORTER_RELEASE_URL must be the folder of a porter release, then reinstall"
  exit 1
fi
sum=${line%% *}
name=${line##* }

echo "porter: fetching ${base}/${name}"
if ! fetch "${base}/${name}" .porter-download; then
  rm -f .porter-download
  echo "porter: could not download ${base}/${name}: check PORTER_RELEASE_URL, then reinstall"
  exit 1
fi
if ! printf '%s  %s\n' "${sum}" .porter-download | sha256sum --check --status; then
  rm -f .porter-download
  echo "porter: ${name} from ${base} does not match its SHA256SUMS line (sha256 ${sum}): the download was damaged or altered, and nothing was installed; reinstall, or check the mirror PORTER_RELEASE_URL points at"
  exit 1
fi
chmod 755 .porter-download
mv -f .porter-download porter
echo "porter: installed ${name}, porter $(./porter --version)"

# The config: the panel writes the store, the server id, the console and the game into it from
# the variables before every start (the egg's configuration files). Written once, so your own
# changes to its other keys survive a reinstall. drainMs 8000: Pelican kills the container 10 s
# after the stop signal, and porter's drain must end before that.
if [ ! -f porter.json ]; then
  cat > porter.json << 'JSON'
{
    "api": {
        "baseUrl": "https://seller.example.com"
    },
    "servers": [
        {
            "id": "00000000-0000-0000-0000-000000000000",
            "name": "game",
            "executor": {
                "type": "rcon",
                "host": "172.18.0.1",
                "port": 25575
            },
            "players": {
                "preset": "minecraft"
            }
        }
    ],
    "stateDir": "./state",
    "shutdown": {
        "drainMs": 8000
    }
}
JSON
fi
echo "porter: install complete"
