#!/usr/bin/env bash
# Here, before bench/reward_throughput_gpu.sh runs on a GPU machine: what that machine lacks, into .carry/
# (git ignores it; the device tool carries it). .carry/httplib: Debian's cpp-httplib (built as a library,
# with OpenSSL support, so OpenSSL's, zlib's and brotli's headers too, and brotli's runtime library in case the
# machine has none), unpacked, not installed. .carry/reward_candidates: the built-in brain's candidates for the
# suite's tasks, as tests/builtin's generate_candidates writes them from the committed graphs.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .carry/httplib .carry/reward_candidates
mkdir -p .carry/httplib
(cd .carry/httplib && apt-get download libcpp-httplib-dev libcpp-httplib0.11 libssl-dev zlib1g-dev libbrotli-dev \
  libbrotli1 > /dev/null && for d in *.deb; do dpkg -x "$d" root; done && rm -- *.deb)
flock /tmp/stitch-build.lock cmake --build build -j2 --target generate_candidates > /dev/null
build/bin/generate_candidates .carry/reward_candidates > /dev/null
du -sh .carry/httplib .carry/reward_candidates
