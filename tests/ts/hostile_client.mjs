// A client built on the TypeScript MCP SDK, run by tests/test_proxy_hostile_stdio.py against
// tests/support/hostile_server.py, directly or through `urlvet proxy`. It knows nothing of
// urlvet: it records every elicitation its handler is given (the raw params), accepts it, calls
// the server's one tool and prints one JSON line: what it was shown, the result or the error.
//
//   node hostile_client.mjs COMMAND [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
const client = new Client(
  { name: "urlvet-ts-hostile", version: "1.0.0" },
  { capabilities: { elicitation: { form: {}, url: {} } } },
);
const out = { shown: [], notices: [], result: null, error: null };
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  out.shown.push(request.params);
  if (request.params.mode === "url") return { action: "accept" };
  return { action: "accept", content: {} };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  out.notices.push(notification.params);
});
client.onerror = () => {};
await client.connect(transport);
try {
  const result = await client.callTool({ name: "go", arguments: {} }, undefined, { timeout: 8000 });
  out.result = result.content?.[0]?.text ?? JSON.stringify(result);
} catch (error) {
  out.error = { code: error.code ?? null, message: String(error.message), data: error.data ?? null };
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
