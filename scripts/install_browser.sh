#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (Playwright's own browser download is not reachable here).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium for the browser tests ..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || { echo "could not install chromium: the browser tests will fail" >&2; exit 1; }
else
  echo "chromium is missing and this user cannot apt-get install it: install the 'chromium' package" >&2
  exit 1
fi
