// A host: the official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) speaking to
// aimon-console's gateway. Lists the tools, makes each call given, and prints one JSON object:
// {"tools": {NAME: {"readOnlyHint": …, "destructiveHint": …}}, "calls": [{"is_error": …, "text": …}]}.
//
// Usage: NODE_PATH=<peers' node_modules> node ts_host.cjs CALLS_JSON COMMAND [ARG...]
//        … node ts_host.cjs CALLS_JSON http://ADDR/mcp   (bearer token in $AIMON_GATEWAY_TOKEN)
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const {
  StreamableHTTPClientTransport,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

async function main() {
  const calls = JSON.parse(process.argv[2]);
  const target = process.argv.slice(3);
  const transport = target[0].startsWith("http://")
    ? new StreamableHTTPClientTransport(new URL(target[0]), {
        requestInit: {
          headers: { Authorization: `Bearer ${process.env.AIMON_GATEWAY_TOKEN}` },
        },
      })
    : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "ignore" });
  const client = new Client({ name: "ts-host", version: "1.32.2" });
  await client.connect(transport);
  const listed = await client.listTools();
  const tools = {};
  for (const t of listed.tools) {
    tools[t.name] = {
      readOnlyHint: t.annotations?.readOnlyHint ?? null,
      destructiveHint: t.annotations?.destructiveHint ?? null,
    };
  }
  const results = [];
  for (const [tool, args] of calls) {
    const result = await client.callTool({ name: tool, arguments: args });
    const text = result.content
      .filter((c) => c.type === "text")
      .map((c) => c.text)
      .join("\n");
    results.push({ is_error: Boolean(result.isError), text });
  }
  await client.close();
  process.stdout.write(JSON.stringify({ tools, calls: results }) + "\n");
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
