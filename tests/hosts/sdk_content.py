"""A host: the official Python SDK client (mcp==2.3.0) using everything but tools through
aimon-console's gateway (`serve --stdio`): resources, templates, prompts, completions, a tool's
image, its progress and its log messages, and a server's sampling and elicitation requests made
during its calls, which this host answers.

Prints one JSON object on stdout: what it listed, read and got, for the test to compare.

Usage: sdk_content.py COMMAND [ARG...]   (`serve --stdio`, started as a stdio server)
"""

import asyncio
import json
import sys
import warnings

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp_types as types


async def main() -> None:
    # Logging is deprecated as of 2026-07-28 (SEP-2577); hosts of today still set a level.
    warnings.simplefilter("ignore")
    logs: list[dict] = []
    progress: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append({"level": params.level, "logger": params.logger, "data": params.data})

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    asked: list[str] = []

    async def on_sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append("sampling: " + params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="the host's model says hi"), model="host-model"
        )

    async def on_elicitation(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append("elicitation: " + params.message)
        return types.ElicitResult(action="accept", content={"username": "host", "email": "host@example.com"})

    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    with open("/dev/null", "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(
                read,
                write,
                logging_callback=on_log,
                sampling_callback=on_sampling,
                elicitation_callback=on_elicitation,
            ) as session:
                init = await session.initialize()
                caps = init.capabilities
                await session.set_logging_level("debug")
                resources = await session.list_resources()
                templates = await session.list_resource_templates()
                uris = [str(r.uri) for r in resources.resources]
                text_uri = next(u for u in uris if u.endswith("test://static-text"))
                text = await session.read_resource(text_uri)
                template = templates.resource_templates[0].uri_template
                instance = template.replace("{id}", "42")
                from_template = await session.read_resource(instance)
                prompts = await session.list_prompts()
                with_args = next(p.name for p in prompts.prompts if p.name.endswith("test_prompt_with_arguments"))
                prompt = await session.get_prompt(with_args, {"arg1": "one", "arg2": "two"})
                completion = await session.complete(
                    types.PromptReference(type="ref/prompt", name=with_args),
                    {"name": "arg1", "value": ""},
                )
                tools = [t.name for t in (await session.list_tools()).tools]
                image_tool = next(t for t in tools if t.endswith("test_image_content"))
                image = await session.call_tool(image_tool, {})
                progress_tool = next(t for t in tools if t.endswith("test_tool_with_progress"))
                await session.call_tool(progress_tool, {}, progress_callback=on_progress)
                logging_tool = next(t for t in tools if t.endswith("test_tool_with_logging"))
                await session.call_tool(logging_tool, {})
                sampled = await session.call_tool("fixture__test_sampling", {"prompt": "hello from the fixture"})
                elicited = await session.call_tool("fixture__test_elicitation", {"message": "who are you?"})
    print(json.dumps({
        "capabilities": {
            "resources": caps.resources is not None,
            "prompts": caps.prompts is not None,
            "completions": caps.completions is not None,
            "logging": caps.logging is not None,
        },
        "resources": uris,
        "templates": [t.uri_template for t in templates.resource_templates],
        "text": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in text.contents],
        "from_template": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in from_template.contents],
        "prompts": [p.name for p in prompts.prompts],
        "prompt": [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in prompt.messages],
        "completion": completion.completion.values,
        "image": [{"type": c.type, "mimeType": getattr(c, "mime_type", None)} for c in image.content],
        "progress": progress,
        "logs": logs,
        "asked": asked,
        "sampled": sampled.content[0].text,
        "elicited": elicited.content[0].text,
    }))


if __name__ == "__main__":
    asyncio.run(main())
