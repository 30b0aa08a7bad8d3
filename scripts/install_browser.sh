#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (Playwright's own browser download is not reachable here);
# the emoji font makes the dashboard's icons render in screenshots.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian packages for the browser tests: ${missing[*]} ..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || { echo "could not install ${missing[*]}: the browser tests will fail" >&2; exit 1; }
elif [ ! -x /usr/bin/chromium ]; then
  echo "chromium is missing and this user cannot apt-get install it: install the 'chromium' package" >&2
  exit 1
fi
