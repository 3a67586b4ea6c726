// A client built on the TypeScript MCP SDK (npm @modelcontextprotocol/sdk), run through
// `urlvet proxy` by tests/test_proxy_ts.py. It knows nothing of urlvet: it records every
// elicitation it is shown, accepts it, calls the test server's tools and prints one JSON line.
//
//   node client.mjs COMMAND [ARGS...]    (the server command: the proxy, or the server itself)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client(
  { name: "urlvet-ts-test", version: "1.0.0" },
  { capabilities: { elicitation: { form: {}, url: {} } } },
);
const shown = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  shown.push(request.params);
  if (request.params.mode === "url") return { action: "accept" };
  const fields = Object.keys(request.params.requestedSchema?.properties ?? {});
  return { action: "accept", content: Object.fromEntries(fields.map((f) => [f, "Ada"])) };
});

await client.connect(transport);
const out = { protocol: client.getServerVersion() ? "connected" : "none", calls: {}, errors: {} };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const calls = {
  connect_calendar: {},
  restore_session: {},
  connect_both: {},
  greet: {},
  add: { a: 2, b: 40 },
  authorize_all: {},
  sign_in: {},
};
for (const [name, toolArgs] of Object.entries(calls)) {
  try {
    const result = await client.callTool({ name, arguments: toolArgs });
    out.calls[name] = result.content[0].text;
  } catch (error) {
    out.errors[name] = { code: error.code, message: error.message };
  }
}
out.shown = shown;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
