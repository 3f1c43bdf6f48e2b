"""A host that watches the gateway's tool list: the Python SDK client (mcp==2.3.0) over
Streamable HTTP lists the tools, makes one call, waits (at most 20 s) for
`notifications/tools/list_changed`, lists again, and prints one JSON object:
{"before": [NAME…], "call": {"is_error": …, "text": …}, "told": BOOL, "after": [NAME…]}.

Usage: sdk_watch.py URL TOOL ARGS_JSON   (bearer token in $AIMON_GATEWAY_TOKEN)
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    url, tool, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    told = asyncio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            told.set()

    headers = {"Authorization": f"Bearer {os.environ['AIMON_GATEWAY_TOKEN']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                before = sorted(t.name for t in (await session.list_tools()).tools)
                result = await session.call_tool(tool, args)
                text = "\n".join(c.text for c in result.content if c.type == "text")
                try:
                    await asyncio.wait_for(told.wait(), 20)
                except asyncio.TimeoutError:
                    pass
                after = sorted(t.name for t in (await session.list_tools()).tools)
    print(json.dumps({
        "before": before,
        "call": {"is_error": bool(result.is_error), "text": text},
        "told": told.is_set(),
        "after": after,
    }))


if __name__ == "__main__":
    asyncio.run(main())
