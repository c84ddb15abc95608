# Sourced by .ci/run: puts Node 24 LTS first on PATH when the machine's own Node is older.
# The binary comes from the npm registry's `node@24` package (through npx's cache), so no other
# download site is needed. Afterwards `node`, `npm` and `npx` all run on Node 24.
ci_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(ci_node_major)" -lt 24 ]; then
  echo "Node $(node --version 2>/dev/null || echo none) on this machine; fetching node@24 from the registry"
  node24="$(npx -y node@24 -p process.execPath | tail -n 1)"
  if [ ! -x "$node24" ]; then echo "could not get a Node 24 binary" >&2; exit 1; fi
  PATH="$(dirname "$node24"):$PATH"
  export PATH
  hash -r
fi
echo "node $(node --version), npm $(npm --version)"
