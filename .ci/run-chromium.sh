#!/bin/sh
# Headless Chromium for test/graphql/graphql-playground.test.ts (Debian's package; installed when missing).
set -eu
command -v chromium >/dev/null 2>&1 || (apt-get update && apt-get install -y chromium)
