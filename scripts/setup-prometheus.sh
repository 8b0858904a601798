#!/usr/bin/env bash
# Installs Prometheus and promtool (Debian's `prometheus` package) for tests/observability.rs, which
# has a real Prometheus scrape a running gateway. Nothing is started here: the test starts its
# own Prometheus on a free loopback port and stops it. Skipped when both are already present.
set -euo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  echo "setup-prometheus: $(prometheus --version 2>&1 | head -1)"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# The package's service is never started (no init system is asked to).
if ! $sudo apt-get install -y --no-install-recommends prometheus >/tmp/setup-prometheus.log 2>&1; then
  $sudo apt-get update >>/tmp/setup-prometheus.log 2>&1
  $sudo apt-get install -y --no-install-recommends prometheus >>/tmp/setup-prometheus.log 2>&1 || {
    cat /tmp/setup-prometheus.log >&2
    echo "setup-prometheus: could not install Debian's prometheus package" >&2
    exit 1
  }
fi
echo "setup-prometheus: $(prometheus --version 2>&1 | head -1)"
