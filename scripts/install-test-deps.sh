#!/usr/bin/env bash
# Installs the independent oracles and tools the tests use, only where they are missing:
# parasail (Debian python3-parasail) for the golden test.
set -euo pipefail
need_apt=()
/usr/bin/python3 -c 'import parasail' 2>/dev/null || need_apt+=(python3-parasail)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "install-test-deps: missing ${need_apt[*]} and cannot apt-get (not root); tests needing them skip outside CI" >&2
  fi
fi
