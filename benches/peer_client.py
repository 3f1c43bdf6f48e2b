"""The Python SDK client (mcp==2.3.0) as the peer of the call-path benchmark.

Starts a stdio server, does the handshake, makes WARMUP calls, then CALLS sequential
`tools/call`s of TOOL with ARGS, timing each one; prints one JSON object on stdout:
{"calls": N, "seconds": S, "latencies_s": [...]}.

Usage: peer_client.py CALLS WARMUP TOOL ARGS_JSON COMMAND [ARG...]
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    calls, warmup, tool, args = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
    params = StdioServerParameters(command=sys.argv[5], args=sys.argv[6:])
    with open("/dev/null", "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for _ in range(warmup):
                    await session.call_tool(tool, args)
                latencies = []
                started = time.perf_counter()
                for _ in range(calls):
                    t = time.perf_counter()
                    result = await session.call_tool(tool, args)
                    latencies.append(time.perf_counter() - t)
                    if result.is_error:
                        raise SystemExit(f"tool error: {result}")
                seconds = time.perf_counter() - started
    print(json.dumps({"calls": calls, "seconds": seconds, "latencies_s": latencies}))


if __name__ == "__main__":
    asyncio.run(main())
