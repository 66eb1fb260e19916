#!/usr/bin/env bash
# Install what the cloud-storage tests (tests/cloud) need beyond the pip `test` extra:
# Azurite (Azure Blob emulator), pinned in tests/cloud/azurite/package-lock.json, installed with `npm ci`.
# moto (S3) and gcp-storage-emulator (GCS) come from the `test` extra. Idempotent: does nothing when the
# pinned Azurite is already installed. Without Node.js/npm it warns, and the Azure tests skip with the reason.
set -euo pipefail
cd "$(dirname "$0")/../tests/cloud/azurite"

want=$(python3 -c 'import json; print(json.load(open("package.json"))["devDependencies"]["azurite"])')
have=""
if [ -f node_modules/azurite/package.json ]; then
  have=$(python3 -c 'import json; print(json.load(open("node_modules/azurite/package.json"))["version"])')
fi
if [ "$have" = "$want" ] && [ -x node_modules/.bin/azurite-blob ]; then
  echo "setup_cloud: azurite $have already installed"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "setup_cloud: WARNING: node/npm not found; the Azure Blob tests will be skipped" >&2
  exit 0
fi
echo "setup_cloud: installing azurite $want (npm ci)"
npm ci --no-audit --no-fund --loglevel=error
