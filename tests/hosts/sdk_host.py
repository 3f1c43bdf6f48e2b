"""A host: the official Python SDK client (mcp==2.3.0) speaking to aimon-console's gateway.

Lists the tools, then makes each call given, and prints one JSON object on stdout:
{"tools": {NAME: {"readOnlyHint": …, "destructiveHint": …}}, "calls": [{"is_error": …, "text": …}]}.

Usage: sdk_host.py CALLS_JSON COMMAND [ARG...]   `serve --stdio`, started as a stdio server
       sdk_host.py CALLS_JSON http://ADDR/mcp     Streamable HTTP, the bearer token in
                                                  $AIMON_GATEWAY_TOKEN
(CALLS_JSON: [[TOOL, ARGS], …])
"""

import asyncio
import json
import sys

import os
from contextlib import asynccontextmanager

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connect(target: list[str]):
    if target[0].startswith("http://"):
        token = os.environ["AIMON_GATEWAY_TOKEN"]
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with streamable_http_client(target[0], http_client=http) as streams:
                yield streams[0], streams[1]
    else:
        params = StdioServerParameters(command=target[0], args=target[1:])
        with open("/dev/null", "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (read, write):
                yield read, write


async def main() -> None:
    calls = json.loads(sys.argv[1])
    async with connect(sys.argv[2:]) as (read, write):
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
