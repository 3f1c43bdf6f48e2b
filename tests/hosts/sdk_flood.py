"""A host that floods the gateway: the Python SDK client (mcp==2.3.0) over Streamable HTTP makes
CALLS `tools/call`s of TOOL at once on one session, each with its own text
("HOST-N"), and prints one JSON object: {"answers": {"HOST-N": TEXT, …}, "errors": [...]}.

Usage: sdk_flood.py URL TOOL HOST CALLS   (bearer token in $AIMON_GATEWAY_TOKEN)
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    url, tool, host, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    headers = {"Authorization": f"Bearer {os.environ['AIMON_GATEWAY_TOKEN']}"}
    limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx2.AsyncClient(headers=headers, timeout=300, limits=limits) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def one(n: int):
                    text = f"{host}-{n}"
                    result = await session.call_tool(tool, {"text": text})
                    got = "\n".join(c.text for c in result.content if c.type == "text")
                    return text, got, bool(result.is_error)

                done = await asyncio.gather(*(one(n) for n in range(calls)), return_exceptions=True)
    answers, errors = {}, []
    for item in done:
        if isinstance(item, BaseException):
            errors.append(repr(item))
        else:
            text, got, is_error = item
            if is_error:
                errors.append(f"{text}: {got}")
            answers[text] = got
    print(json.dumps({"answers": answers, "errors": errors}))


if __name__ == "__main__":
    asyncio.run(main())
