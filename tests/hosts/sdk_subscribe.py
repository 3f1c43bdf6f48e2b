"""A host: the official Python SDK client (mcp==2.3.0) subscribing to a resource through
aimon-console's gateway (`serve --stdio`): it writes note TITLE (`<server>__write_note`), finds
the note among the resources, subscribes, writes it again, unsubscribes, writes it a third time,
and prints one JSON object: {"uri": URI, "updated": [URI, …]} (the updates it was told of).

Usage: sdk_subscribe.py SERVER TITLE COMMAND [ARG...]
"""

import asyncio
import json
import sys
import warnings

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    # resources/subscribe is legacy as of 2026-07-28; the hosts of today use it.
    warnings.simplefilter("ignore")
    server, title = sys.argv[1], sys.argv[2]
    updated: list[str] = []
    heard = asyncio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            heard.set()

    params = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
    write = f"{server}__write_note"
    with open("/dev/null", "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write_stream):
            async with ClientSession(read, write_stream, message_handler=on_message) as session:
                await session.initialize()
                await session.call_tool(write, {"title": title, "body": "first"})
                listed = await session.list_resources()
                uri = next(str(r.uri) for r in listed.resources if str(r.uri).endswith(f"/{title}"))
                await session.subscribe_resource(uri)
                await session.call_tool(write, {"title": title, "body": "second"})
                await asyncio.wait_for(heard.wait(), timeout=10)
                await session.unsubscribe_resource(uri)
                await session.call_tool(write, {"title": title, "body": "third"})
                # An update of the third write would come within the gateway's watch (250 ms).
                await asyncio.sleep(1)
    print(json.dumps({"uri": uri, "updated": updated}))


if __name__ == "__main__":
    asyncio.run(main())
