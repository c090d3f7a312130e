// Calls tools through the official MCP TypeScript SDK's Client, which
// checks each structuredContent against the tool's outputSchema (and that
// a tool declaring one returns structuredContent at all). Usage:
//   node call.mjs SDK_DIR '{"name": ..., "arguments": ...}' ... -- COMMAND ARGS...
// Prints one JSON line per call: {"name", "ok", "isError", "structuredContent", "error"}.
const sdk = process.argv[2];
const sep = process.argv.indexOf("--");
const calls = process.argv.slice(3, sep).map((c) => JSON.parse(c));
const [command, ...args] = process.argv.slice(sep + 1);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StdioClientTransport } = await import(sdk + "/dist/esm/client/stdio.js");
const client = new Client({ name: "toolgate-e2e-ts", version: "1" });
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" }));
await client.listTools();
for (const c of calls) {
  try {
    const r = await client.callTool(c);
    console.log(JSON.stringify({ name: c.name, ok: true, isError: !!r.isError, structuredContent: r.structuredContent ?? null }));
  } catch (e) {
    console.log(JSON.stringify({ name: c.name, ok: false, error: String(e && e.message || e) }));
  }
}
await client.close();
