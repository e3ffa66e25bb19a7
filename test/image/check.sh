#!/usr/bin/env bash
# The container image, built from the Dockerfile as committed by a real engine (podman), then
# run the way the README tells a firm to run it:
#   1. the base: the official node:X.Y.Z-bookworm-slim if it is here, else a stand-in
#      (test/image/base.sh says how the stand-in differs);
#   2. podman build --pull=never --format docker (the OCI format drops HEALTHCHECK); its size,
#      and nothing of a native build left in it;
#   3. the README's `docker run` line and its first-run commands, as written, with podman for
#      docker and the ids from each command's --json output in place of the <…> placeholders;
#      /healthz, a keyed GET /api/v1/businesses, /docs and /openapi/v1.json; the process runs as
#      uid 1000 and /data is node:node; the health check; stop within the grace period with
#      "daybook stopped" logged; start again with the books still there;
#   4. compose.yaml with podman-compose: up on the image just built, exec daybook --help, down;
#   5. an upgrade: books written by the previous release's own CLI, served by this image after
#      a stop and a run, migrated, with the same journal and a balanced trial balance.
# The engine's settings for this sandbox (runc, ulimits, the host network for the build, the
# host's CA bundle for npm) live here, not in the Dockerfile.
#   test/image/check.sh           (CI runs it; needs podman, runc, mmdebstrap, podman-compose)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
image=daybook                     # the README's tag, which compose.yaml's image: names too
run_id="daybook-check-$$"
work="$(mktemp -d)"
containers=()
volumes=()
compose_project=

say() { echo "image check: $*"; }
fail() {
  echo "image check: FAILED: $*" >&2
  for container in "${containers[@]}"; do
    echo "--- last log lines of $container" >&2
    podman logs --tail 20 "$container" >&2 2>&1 || true
  done
  exit 1
}
cleanup() {
  set +e
  if [ -n "$compose_project" ]; then (cd "$root" && podman-compose -p "$compose_project" down >/dev/null 2>&1); fi
  for container in "${containers[@]}"; do podman rm -f "$container" >/dev/null 2>&1; done
  for volume in "${volumes[@]}"; do podman volume rm -f "$volume" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT

# The last commit before the image was built and run in CI: the release to upgrade from until a
# v* tag exists before HEAD.
FIRST_RELEASE_BEFORE=52adc00bfdcad694e2f9deef302a30e074d6090e
cache="${DAYBOOK_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/daybook}"

# The engine: runc (crun refuses this kind of machine's hybrid cgroups) and ulimits that root
# without CAP_SYS_RESOURCE may set. CONTAINERS_CONF is read instead of the machine's own file.
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$work/containers.conf"

# podman without systemd cannot schedule the health check's timer, and says so on every run,
# start, stop and rm; `podman healthcheck run` below runs the check itself. Nothing else is hidden.
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }
free_port() { node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
# Waits until GET /healthz on the port answers 200, or fails naming the container.
wait_healthy() {
  local port="$1" container="$2"
  for _ in $(seq 1 150); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ]; then return 0; fi
    if [ "$(podman inspect --format '{{.State.Running}}' "$container" 2>/dev/null)" != true ]; then fail "$container stopped before /healthz answered"; fi
    sleep 0.2
  done
  fail "$container: /healthz did not answer 200 within 30 s"
}
# The value of a JavaScript expression (`.accounts[0].id`) on the JSON on standard input.
pick() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=eval('(j)=>j'+process.argv[1])(JSON.parse(s));if(v===undefined)process.exit(1);console.log(v)})" "$1"; }
# The value of one field of the JSON object on standard input.
field() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined)process.exit(1);console.log(v)})" "$1"; }

# 1. The base image.
bash "$root/test/image/base.sh"

# 2. The build, as committed.
build_options=(--pull=never --format docker --network host)
cafile="$(npm config get cafile 2>/dev/null || true)"
case "$cafile" in ""|null|undefined) cafile=/etc/ssl/certs/ca-certificates.crt ;; esac
{
  echo "registry=$(npm config get registry)"
  if [ -s "$cafile" ]; then echo "cafile=/run/daybook-build-ca.crt"; fi
} >"$work/npmrc"
build_options+=(-v "$work/npmrc:/usr/local/etc/npmrc:ro")
if [ -s "$cafile" ]; then build_options+=(-v "$cafile:/run/daybook-build-ca.crt:ro"); fi
started=$SECONDS
podman build "${build_options[@]}" -t "$image" "$root" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail "podman build failed"; }
say "built $image in $((SECONDS - started)) s: $(podman image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1 / 1e6}')"
leftovers="$(podman run --rm --entrypoint sh "$image" -c \
  'find /app \( -name "obj.target" -o -name "*.a" -o -name "*.o" -o -name "*.mk" -o -path "*/build/Release" \) -print; for tool in g++ gcc make python3; do command -v $tool || true; done')"
[ -z "$leftovers" ] || fail "build leftovers in the final image: $leftovers"
[ "$(podman run --rm "$image" node --version)" = "v$("$root/.ci/node-version")" ] || fail "the image does not run the pinned Node"

# 3. As the README runs it. The README's lines, with podman for docker, this run's names and a
# free port, and the ids from --json.
readme="$root/README.md"
port="$(free_port)"
container="$run_id"
volume="$run_id-data"
containers+=("$container")
volumes+=("$volume")
run_line="$(sed -n '/^docker run -d /,/[^\\]$/p' "$readme" | sed 's/\\$//' | tr -s ' \n' ' ')"
for expected in '--name daybook ' '-p 3000:3000 ' '-v daybook-data:/data ' ' daybook '; do
  case "$run_line " in *"$expected"*) ;; *) fail "README's docker run line no longer has '$expected': $run_line" ;; esac
done
run_line="$(printf '%s ' "$run_line" | sed -e "s/^docker run /podman run /" -e "s/--name daybook /--name $container /" \
  -e "s/-p 3000:3000 /-p 127.0.0.1:$port:3000 /" -e "s/-v daybook-data:/-v $volume:/" -e "s/ daybook \$/ $image/")"
eval "$run_line" >/dev/null
wait_healthy "$port" "$container"
say "running: $run_line"

account= business= key=
while IFS= read -r line; do
  case "$line" in
    "docker exec daybook daybook "*) ;;
    "curl "*) continue ;;
    *) fail "unexpected line in the README's first-run block: $line" ;;
  esac
  command="${line/docker exec daybook daybook /podman exec $container daybook --json }"
  command="${command//<account-id>/$account}"
  answer="$(eval "$command")" || fail "$line: exit $?"
  case "$line" in
    *"account create"*) account="$(field id <<<"$answer")" ;;
    *"business create"*) business="$(field id <<<"$answer")" ;;
    *"key create"*) key="$(field key <<<"$answer")" ;;
  esac
done < <(sed -n '/^First run: make the account/,/^```$/p' "$readme" | grep -E '^(docker|curl) ')
[ -n "$account" ] && [ -n "$business" ] && [ -n "$key" ] || fail "the README's first run did not make an account, a business and a key"
curl_line="$(sed -n '/^First run: make the account/,/^```$/p' "$readme" | grep -E '^curl ')"
curl_line="${curl_line//<key>/$key}"
curl_line="${curl_line//localhost:3000/127.0.0.1:$port}"
businesses="$(eval "$curl_line")"
case "$businesses" in *"\"$business\""*"Harbor Coffee"*|*"Harbor Coffee"*"\"$business\""*) ;; *) fail "GET /api/v1/businesses answered: $businesses" ;; esac
say "the README's first run made account $account, business $business and a key; GET /api/v1/businesses lists it"

# An invoice's PDF, drawn on its worker thread from the build (dist/), as a customer fetches it.
api="http://127.0.0.1:$port/api/v1"
auth="Authorization: Bearer $key"
post() { curl -fsS -H "$auth" -H "Idempotency-Key: image-check-$1" -H 'content-type: application/json' -d "$3" "$api/$2"; }
revenue="$(curl -fsS -H "$auth" "$api/accounts?entityId=$business&type=revenue" | pick '.accounts[0].id')"
customer="$(post customer customers '{"name": "Image Check Cafe", "email": "ap@cafe.example"}' | field id)"
invoice="$(post invoice invoices '{"entityId": "'"$business"'", "customerId": "'"$customer"'", "lines": [{"description": "Espresso machine service", "quantity": "1", "unitPriceCents": "12500", "accountId": "'"$revenue"'"}]}' | field invoiceId)"
pay_url="$(post send "invoices/$invoice/send" '{}' | field payUrl)"
curl -fsS -o "$work/invoice.pdf" "http://127.0.0.1:$port/${pay_url#*://*/}/invoice.pdf" || fail "the pay page's PDF did not download"
[ "$(head -c 5 "$work/invoice.pdf")" = '%PDF-' ] || fail "the pay page's PDF is not a PDF"
say "an invoice sent through the API; its PDF drawn on the worker thread ($(wc -c <"$work/invoice.pdf") bytes)"

[ "$(podman exec "$container" awk '/^Uid:/ { print $2 }' /proc/1/status)" = 1000 ] || fail "the server does not run as uid 1000"
[ "$(podman exec "$container" stat -c %U:%G:%a /data)" = node:node:700 ] || fail "/data is not node:node, 700"
podman healthcheck run "$container" >/dev/null || fail "podman healthcheck run: unhealthy"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/openapi/v1.json")" = 200 ] || fail "/openapi/v1.json did not answer 200"
curl -fsS -o "$work/reference.js" "http://127.0.0.1:$port/docs/redoc.standalone.js" && grep -q Redoc "$work/reference.js" || fail "/docs has no script"
say "runs as uid 1000, /data is node:node and 700, healthy, /docs and /openapi/v1.json answer"

grace_seconds=30
started=$SECONDS
podman stop -t "$grace_seconds" "$container" >/dev/null || fail "podman stop failed"
stop_seconds=$((SECONDS - started))
[ "$stop_seconds" -lt "$grace_seconds" ] || fail "podman stop took $stop_seconds s: the server ignored SIGTERM"
[ "$(podman inspect --format '{{.State.ExitCode}}' "$container")" = 0 ] || fail "the server exited $(podman inspect --format '{{.State.ExitCode}}' "$container") on SIGTERM"
podman logs "$container" >"$work/server.log" 2>&1
grep -q '"msg":"daybook stopped"' "$work/server.log" || fail "no 'daybook stopped' in the log"
podman start "$container" >/dev/null
wait_healthy "$port" "$container"
after_restart="$(curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/api/v1/businesses")"
case "$after_restart" in *"\"$business\""*) ;; *) fail "the books were lost across a restart: $after_restart" ;; esac
say "stopped in $stop_seconds s with exit 0 and 'daybook stopped' logged; started again with the books kept"
podman rm -f "$container" >/dev/null

# 4. compose.yaml, on the image built above (podman-compose 1.0.3 would build without
# --format docker or the host network, and ignores stop_grace_period).
compose_project="$run_id-compose"
compose_port="$(free_port)"
volumes+=("${compose_project}_daybook-data")
(cd "$root" && DAYBOOK_PORT="$compose_port" podman-compose -p "$compose_project" up -d --no-build >"$work/compose.log" 2>&1) || { cat "$work/compose.log" >&2; fail "podman-compose up failed"; }
compose_container="$(podman ps --filter "label=io.podman.compose.project=$compose_project" --format '{{.Names}}' | head -n 1)"
[ -n "$compose_container" ] || fail "podman-compose up started no container"
containers+=("$compose_container")
wait_healthy "$compose_port" "$compose_container"
(cd "$root" && podman-compose -p "$compose_project" exec daybook daybook --help >"$work/help.txt" 2>/dev/null) || fail "compose exec daybook --help failed"
grep -q '^Usage: daybook ' "$work/help.txt" || fail "compose exec daybook --help printed no usage"
(cd "$root" && podman-compose -p "$compose_project" down >/dev/null 2>&1) || fail "podman-compose down failed"
compose_project=
say "compose.yaml: up on port $compose_port, exec daybook --help, down"

# 5. An upgrade on a volume: books written by the previous release's own CLI, on this machine,
# copied into a volume and served by this image. The previous release is the newest v* tag
# before this commit; until one exists, the last commit before the image was built in CI.
previous="$(git -C "$root" describe --tags --abbrev=0 --match 'v*' HEAD^ 2>/dev/null || echo "$FIRST_RELEASE_BEFORE")"
previous_sha="$(git -C "$root" rev-parse --verify "$previous^{commit}")" || fail "the previous release $previous is not in this clone"
release_dir="$cache/release-$previous_sha"
if [ ! -e "$release_dir/.installed" ]; then
  rm -rf "$release_dir" && mkdir -p "$release_dir"
  git -C "$root" archive "$previous_sha" | tar -x -C "$release_dir"
  # A release whose SQLite driver compiles from source builds against this Node's own headers.
  (cd "$release_dir" && npm_config_nodedir="$(dirname "$(dirname "$(command -v node)")")" npm ci --no-audit --no-fund >"$work/release.log" 2>&1) \
    || { tail -30 "$work/release.log" >&2; fail "installing the previous release ($previous) failed"; }
  touch "$release_dir/.installed"
fi
old_books="$work/old-books"
mkdir -p "$old_books"
old() { (cd "$release_dir" && DAYBOOK_LOG_LEVEL=silent DAYBOOK_JOB_RATES=off node bin/daybook.js --db "$old_books/daybook.sqlite" "$@"); }
old_account="$(old --json account create --name "Upgrade & Sons" | field id)"
old_business="$(old --json business create --account "$old_account" --name "Upgrade Works" --basis accrual | field id)"
old_key="$(old --json key create --account "$old_account" --name upgrade-check --access read | field key)"
expense_account="$(cd "$release_dir" && node -e "
  const db = new (require('better-sqlite3'))(process.argv[1], { readonly: true });
  console.log(db.prepare(\"SELECT id FROM ledger_accounts WHERE business_id = ? AND system_role = 'uncategorized_expense'\").pluck().get(process.argv[2]));
  db.close();" "$old_books/daybook.sqlite" "$old_business")"
bill="$(old --json bill create --business "$old_business" --vendor "Miller & Sons" --number A-1001 --issue-date 2026-10-01 \
  --due-date 2026-10-31 --amount-cents 123456 --account "$expense_account" | field id)"
old --json bill pay --id "$bill" --amount-cents 23456 --date 2026-10-15 >/dev/null
old export ledger --business "$old_business" >"$work/before.journal"

container="$run_id-upgrade"
volume="$run_id-upgrade-data"
containers+=("$container")
volumes+=("$volume")
podman volume create "$volume" >/dev/null
podman run --rm --user root --entrypoint sh -v "$volume:/data" -v "$old_books:/old:ro" "$image" \
  -c 'cp /old/daybook.sqlite* /data/ && chown -R node:node /data' || fail "copying the old books into a volume failed"
port="$(free_port)"
podman run -d --name "$container" -p "127.0.0.1:$port:3000" -v "$volume:/data" "$image" >/dev/null
wait_healthy "$port" "$container"
podman stop -t "$grace_seconds" "$container" >/dev/null
podman start "$container" >/dev/null
wait_healthy "$port" "$container"
podman exec "$container" daybook export ledger --business "$old_business" >"$work/after.journal"
# The postings must be the same to the byte. The chart may grow (a release can add system
# accounts to every chart, as card payments did), so account declarations are compared as a
# set: every account declared before is declared after.
postings() { grep -v -e '^account ' -e '^    ; type: ' "$1"; }
diff -u <(postings "$work/before.journal") <(postings "$work/after.journal") >&2 || fail "the journal's postings differ after the upgrade"
lost_accounts="$(comm -23 <(grep '^account ' "$work/before.journal" | sort) <(grep '^account ' "$work/after.journal" | sort))"
[ -z "$lost_accounts" ] || fail "accounts declared before the upgrade are gone after it: $lost_accounts"
trial_balance="$(curl -fsS -H "Authorization: Bearer $old_key" "http://127.0.0.1:$port/api/v1/reports/trial-balance?entityId=$old_business&asOf=2026-10-31")"
node -e "
  const { rows, totals } = JSON.parse(process.argv[1]);
  const figures = rows.map((row) => row.debit.cents + '/' + row.credit.cents).sort().join(' ');
  const expected = ['0/100000', '0/23456', '123456/0'].join(' ');
  if (figures !== expected || totals.debit.cents !== '123456' || totals.credit.cents !== '123456') {
    console.error('trial balance after the upgrade: ' + figures + ', totals ' + totals.debit.cents + '/' + totals.credit.cents + '; expected ' + expected);
    process.exit(1);
  }" "$trial_balance" || fail "the trial balance changed in the upgrade"
say "upgrade from $previous: the old release's books served by this image, same journal, trial balance 1,234.56 each side"
say "all checks passed"
