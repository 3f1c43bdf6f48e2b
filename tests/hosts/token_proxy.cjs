// A reverse proxy that adds the gateway's bearer token to every request, for clients that cannot
// send headers of their own (the MCP conformance suite's server runner). Everything else passes
// through unchanged: Host and Origin stay as the client sent them, so the gateway still checks
// them. Usage: GATEWAY_TOKEN=... node token_proxy.cjs PORT TARGET_URL (PORT 0: any free one);
// once up it prints "listening http://127.0.0.1:PORT/mcp".
const http = require("http");
const [, , port, target] = process.argv;
const token = (process.env.GATEWAY_TOKEN || "").trim();
if (!port || !target || !token) {
  console.error("usage: GATEWAY_TOKEN=... node token_proxy.cjs PORT TARGET_URL");
  process.exit(2);
}
const upstream = new URL(target);
const proxy = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", (e) => {
    if (!res.headersSent) res.writeHead(502);
    res.end(String(e));
  });
  req.pipe(forward);
});
proxy.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${proxy.address().port}${upstream.pathname}`);
});
