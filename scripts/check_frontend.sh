#!/usr/bin/env bash
# Check that the committed bundle (torch_tb_profiler/static) is what the committed frontend sources
# build to, and run the frontend's unit tests (Vitest).
# With Node >= 20.19: npm ci, type-check, rebuild into a temporary folder and compare file by file.
# Without Node: compare the recorded hash of the sources (static/source-hash.txt) with the sources.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
STATIC="$ROOT/torch_tb_profiler/static"

node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'
}

if ! node_ok; then
  echo "check_frontend: Node >= 20.19 not found; checking the recorded source hash only" >&2
  want=$(cat "$STATIC/source-hash.txt")
  have=$(python3 - "$ROOT/frontend" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
files = [f for f in ("package.json", "package-lock.json", "index.html", "vite.config.ts", "tsconfig.json")]
for d in ("src", "public"):
    for base, _, names in os.walk(os.path.join(root, d)):
        files += [os.path.relpath(os.path.join(base, n), root).replace(os.sep, "/") for n in names]
h = hashlib.sha256()
for f in sorted(files):
    h.update(f.encode() + b"\0")
    with open(os.path.join(root, f), "rb") as fh:
        h.update(fh.read())
    h.update(b"\0")
print(h.hexdigest())
PY
)
  if [ "$want" != "$have" ]; then
    echo "check_frontend: FAIL: frontend sources changed since the bundle was built (hash $have, bundle built from $want). Run: cd frontend && npm ci && npm run build" >&2
    exit 1
  fi
  echo "check_frontend: bundle matches the sources (hash)"
  exit 0
fi

cd frontend
# scripts/setup_e2e.sh has usually just run `npm ci`; repeat it only when the lock file is newer.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
npx tsc --noEmit -p .
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx vite build --logLevel error --outDir "$tmp/static" --emptyOutDir
node scripts/source-hash.mjs --write "$tmp/static"
if ! diff -r "$tmp/static" "$STATIC" >"$tmp/diff.txt"; then
  echo "check_frontend: FAIL: the committed bundle differs from a rebuild of frontend/:" >&2
  head -20 "$tmp/diff.txt" | cut -c1-300 >&2
  echo "Run: cd frontend && npm ci && npm run build, then commit torch_tb_profiler/static" >&2
  exit 1
fi
echo "check_frontend: committed bundle matches a rebuild"
npx vitest run --reporter=dot
