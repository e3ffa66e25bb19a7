#!/usr/bin/env bash
# The container image's steps without a Docker engine: what the Dockerfile's build stage does
# (npm ci, which builds, then npm prune --omit=dev) in a clean copy of the tracked files, then
# the final stage's command from that tree, with its settings, checked through GET /healthz.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The build stage's context: the files the Dockerfile copies.
(cd "$root" && git ls-files -z package.json package-lock.json tsconfig.json tsconfig.build.json bin config db jobs src | xargs -0 cp --parents -t "$work")
cd "$work"
npm ci --no-audit --no-fund >/dev/null
npm prune --omit=dev --no-audit --no-fund >/dev/null
test ! -e node_modules/typescript || { echo "image steps: dev modules left after npm prune" >&2; exit 1; }
# The reference page's script is the build's copy: Redoc itself is a dev module, pruned above.
test ! -e node_modules/redoc || { echo "image steps: redoc left after npm prune" >&2; exit 1; }

# The final stage: env only, the books in a data folder, serve.
mkdir -p data
port="$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
env NODE_ENV=production DAYBOOK_DB="$work/data/daybook.sqlite" DAYBOOK_BACKUP_DIR="$work/data/backups" \
  HOST=127.0.0.1 PORT="$port" DAYBOOK_JOB_RATES=off DAYBOOK_LOG_LEVEL=warn \
  node bin/daybook.js serve >/dev/null &
server_pid=$!
for _ in $(seq 1 100); do
  if answer="$(curl -fsS "http://127.0.0.1:$port/healthz" 2>/dev/null)"; then
    if [ "$answer" = '{"ok":true}' ]; then
      node bin/daybook.js --db "$work/data/daybook.sqlite" jobs list >/dev/null
      curl -fsS -o "$work/reference.js" "http://127.0.0.1:$port/docs/redoc.standalone.js"
      grep -q 'Redoc' "$work/reference.js" || { echo "image steps: /docs has no script" >&2; exit 1; }
      echo "image steps: built, pruned to production modules, served, /healthz and /docs ok"
      exit 0
    fi
    echo "image steps: /healthz answered $answer" >&2
    exit 1
  fi
  sleep 0.2
done
echo "image steps: the server did not answer /healthz" >&2
exit 1
