"""A host: the official Python SDK client (mcp==2.3.0) speaking to `aimon-console serve --stdio`.

Lists the tools, then makes each call given, and prints one JSON object on stdout:
{"tools": {NAME: {"readOnlyHint": …, "destructiveHint": …}}, "calls": [{"is_error": …, "text": …}]}.

Usage: sdk_host.py CALLS_JSON COMMAND [ARG...]   (CALLS_JSON: [[TOOL, ARGS], …])
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    calls = json.loads(sys.argv[1])
    params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    with open("/dev/null", "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                tools = {
                    t.name: {
                        "readOnlyHint": t.annotations.read_only_hint if t.annotations else None,
                        "destructiveHint": t.annotations.destructive_hint if t.annotations else None,
                    }
                    for t in listed.tools
                }
                results = []
                for tool, args in calls:
                    result = await session.call_tool(tool, args)
                    text = "\n".join(c.text for c in result.content if c.type == "text")
                    results.append({"is_error": bool(result.is_error), "text": text})
    print(json.dumps({"tools": tools, "calls": results}))


if __name__ == "__main__":
    asyncio.run(main())
