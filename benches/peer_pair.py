"""The Python SDK client (mcp==2.3.0) holding two sessions at once, for a paired measure.

Starts two stdio servers (A and B), does both handshakes and WARMUP calls on each, then makes
ROUNDS rounds of BLOCK sequential calls on A followed by BLOCK on B, timing each call, so both
sides see the same moments of the machine. Prints one JSON object on stdout:
{"a": {"calls": N, "seconds": S, "latencies_s": [...]}, "b": {...}} (seconds: the sum of that
side's calls).

Usage: peer_pair.py ROUNDS BLOCK WARMUP TOOL_A TOOL_B ARGS_JSON -- COMMAND_A [ARG...] -- COMMAND_B [ARG...]
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    rounds, block, warmup = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    tools, args = (sys.argv[4], sys.argv[5]), json.loads(sys.argv[6])
    rest = sys.argv[7:]
    split = [i for i, a in enumerate(rest) if a == "--"]
    command_a, command_b = rest[split[0] + 1 : split[1]], rest[split[1] + 1 :]
    sides = [
        StdioServerParameters(command=command_a[0], args=command_a[1:]),
        StdioServerParameters(command=command_b[0], args=command_b[1:]),
    ]
    with open("/dev/null", "w") as devnull:
        async with stdio_client(sides[0], errlog=devnull) as (ra, wa), stdio_client(
            sides[1], errlog=devnull
        ) as (rb, wb):
            async with ClientSession(ra, wa) as a, ClientSession(rb, wb) as b:
                sessions = (a, b)
                for session in sessions:
                    await session.initialize()
                for session, tool in zip(sessions, tools):
                    for _ in range(warmup):
                        await session.call_tool(tool, args)
                latencies = ([], [])
                for _ in range(rounds):
                    for side, (session, tool) in enumerate(zip(sessions, tools)):
                        for _ in range(block):
                            t = time.perf_counter()
                            result = await session.call_tool(tool, args)
                            latencies[side].append(time.perf_counter() - t)
                            if result.is_error:
                                raise SystemExit(f"tool error: {result}")
    out = {
        name: {"calls": len(lat), "seconds": sum(lat), "latencies_s": lat}
        for name, lat in zip(("a", "b"), latencies)
    }
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
