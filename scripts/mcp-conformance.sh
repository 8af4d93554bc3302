#!/usr/bin/env bash
# Runs the MCP conformance suite's scenarios that apply to this server against a running instance.
#
#   URL=http://127.0.0.1:3000/mcp KEY=mk_... scripts/mcp-conformance.sh [scenario…]
#
# @modelcontextprotocol/conformance 0.1.13 is the newest that starts on Node 20. It sends no custom
# headers, so a preload (scripts/mcp-auth-fetch.mjs) adds Authorization to its fetches. Default
# scenarios: server-initialize, ping, tools-list; the others exercise the fixture tools, resources
# and prompts of the SDK's reference server, or an unauthenticated localhost server (docs/mcp.md).
set -euo pipefail
: "${URL:?set URL to the MCP endpoint, e.g. http://127.0.0.1:3000/mcp}"
: "${KEY:?set KEY to a workspace API key}"
VERSION=0.1.13
here="$(cd "$(dirname "$0")" && pwd)"
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(server-initialize ping tools-list)

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "Installing @modelcontextprotocol/conformance@$VERSION into $dir…" >&2
npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$VERSION" >/dev/null

failed=0
for scenario in "${scenarios[@]}"; do
  echo "== $scenario"
  MCP_KEY="$KEY" NODE_OPTIONS="--import $here/mcp-auth-fetch.mjs" \
    node "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server --url "$URL" --scenario "$scenario" \
    || failed=1
done
exit $failed
