#!/usr/bin/env bash
# Runs the MCP Inspector CLI against a running server: lists the tools, then calls get-balance.
#
#   URL=http://127.0.0.1:3000/mcp KEY=mk_... scripts/mcp-inspector.sh
#
# @modelcontextprotocol/inspector-cli 1.0.3 is the Inspector CLI that runs on Node 20, and only when
# started from its own build/ folder (docs/mcp.md). It is installed into a temporary folder, never
# into this project's dependencies. Exits non-zero when a call fails or returns a tool error.
set -euo pipefail
: "${URL:?set URL to the MCP endpoint, e.g. http://127.0.0.1:3000/mcp}"
: "${KEY:?set KEY to a workspace API key}"
VERSION=1.0.3

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "Installing @modelcontextprotocol/inspector-cli@$VERSION into $dir…" >&2
npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector-cli@$VERSION" >/dev/null
cd "$dir/node_modules/@modelcontextprotocol/inspector-cli/build"

inspect() { node index.js "$URL" --transport http --header "Authorization: Bearer $KEY" "$@"; }

echo "== tools/list"
inspect --method tools/list | tee "$dir/list.json"
echo
node -e '
  const { tools } = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.error(`-- ${tools.length} tools: ${tools.map((t) => t.name).join(", ")}`);
  if (!tools.length) process.exit(1);
' "$dir/list.json"

echo "== tools/call get-balance"
inspect --method tools/call --tool-name get-balance | tee "$dir/call.json"
echo
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.isError || !r.structuredContent) { console.error("-- get-balance failed"); process.exit(1); }
  console.error(`-- get-balance: balance ${r.structuredContent.balance_formatted}, key ${r.structuredContent.key.prefix}…`);
' "$dir/call.json"
