#!/usr/bin/env bash
# Tools for the browser tests (tests/e2e) and the frontend check: Debian's chromium (never a browser
# downloaded by Playwright) and the frontend's npm packages. Without root, a missing chromium is left
# missing and the e2e tests skip with a message saying so.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup_e2e: installing chromium (Debian package)"
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
      || echo "setup_e2e: could not install chromium; browser tests will be skipped" >&2
  else
    echo "setup_e2e: /usr/bin/chromium missing and not root; browser tests will be skipped" >&2
  fi
fi

if command -v npm >/dev/null 2>&1 && [ -f frontend/package-lock.json ]; then
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error) || echo "setup_e2e: npm ci failed" >&2
fi
exit 0
