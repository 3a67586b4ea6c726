// A client built on the TypeScript MCP SDK (npm @modelcontextprotocol/sdk) over Streamable HTTP,
// run by tests/test_proxy_hostile_http.py against a hostile server, with and without `urlvet proxy`.
// It knows nothing of urlvet: it records every elicitation it is shown and accepts it, records
// the code and data of every error (a -32042 carries the URLs to open), calls the server's
// `login` tool and prints one JSON line.
//
//   node http_client.mjs URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url] = process.argv.slice(2);
const out = { shown: [], errors: [], calls: {}, transport: [] };
const transport = new StreamableHTTPClientTransport(new URL(url), {
  reconnectionOptions: {
    maxReconnectionDelay: 100,
    initialReconnectionDelay: 50,
    reconnectionDelayGrowFactor: 1,
    maxRetries: 0,
  },
});
transport.onerror = (error) => out.transport.push(String(error));
const client = new Client(
  { name: "urlvet-ts-http-test", version: "1.0.0" },
  { capabilities: { elicitation: { form: {}, url: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  out.shown.push(request.params);
  return { action: "accept" };
});

try {
  await client.connect(transport);
  const result = await client.callTool({ name: "login", arguments: {} }, undefined, {
    timeout: 8000,
  });
  out.calls.login = result.content?.[0]?.text ?? null;
} catch (error) {
  out.errors.push({ code: error.code ?? null, message: String(error.message), data: error.data ?? null });
}
await new Promise((resolve) => setTimeout(resolve, 200));
try {
  await client.close();
} catch {}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
