"""MCP conformance fixture server, built on the official MCP Python SDK (mcp 2.x).

This is the SDK's fixture server for the `@modelcontextprotocol/conformance`
*server* scenarios when they are run through the gateway: the gateway launches
it as a stdio MCP server and the suite talks to the gateway. It implements every
tool, resource, resource template, prompt and completion those scenarios expect
(see the `test_*` names below), plus logging/setLevel and resource subscriptions.

Usage:
    python conformance_fixture.py   # a stdio MCP server (how the gateway runs it)

Uses the low-level `Server` so the wire shapes (notably the JSON Schema 2020-12
tool's `inputSchema` and the SEP-1330 enum schemas) are sent verbatim.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct
import sys
import warnings
import wave
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

# Logging and sampling are deprecated as of protocol 2026-07-28 (SEP-2577) but are
# exactly what the 2025-era scenarios exercise; keep stderr quiet about it.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

SERVER_NAME = "mcp-conformance-fixture"
SERVER_VERSION = "1.0.0"

# --------------------------------------------------------------------------- data

# 1x1 red pixel PNG.
PNG_1X1_RED = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _tiny_wav() -> str:
    """A 10 ms, 8 kHz, mono, 16-bit silent WAV, base64-encoded."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(struct.pack("<80h", *([0] * 80)))
    return base64.b64encode(buf.getvalue()).decode()


WAV_SILENCE = _tiny_wav()

STATIC_TEXT_URI = "test://static-text"
STATIC_BINARY_URI = "test://static-binary"
WATCHED_URI = "test://watched-resource"
TEMPLATE_URI = "test://template/{id}/data"
TEMPLATE_RE = re.compile(r"^test://template/([^/]+)/data$")

LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

# Process-wide state. Over stdio there is exactly one client connection.
_state: dict[str, Any] = {"log_level": "debug", "subscriptions": set()}

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

# ------------------------------------------------------------------------- tools

TOOLS: list[dict[str, Any]] = [
    {"name": "test_simple_text", "description": "Returns a simple text response", "inputSchema": EMPTY_SCHEMA},
    {"name": "test_image_content", "description": "Returns a PNG image", "inputSchema": EMPTY_SCHEMA},
    {"name": "test_audio_content", "description": "Returns a WAV audio clip", "inputSchema": EMPTY_SCHEMA},
    {"name": "test_embedded_resource", "description": "Returns an embedded resource", "inputSchema": EMPTY_SCHEMA},
    {
        "name": "test_multiple_content_types",
        "description": "Returns text, image and an embedded resource",
        "inputSchema": EMPTY_SCHEMA,
    },
    {
        "name": "test_tool_with_logging",
        "description": "Sends three log notifications while running",
        "inputSchema": EMPTY_SCHEMA,
    },
    {"name": "test_error_handling", "description": "Always returns an error result", "inputSchema": EMPTY_SCHEMA},
    {
        "name": "test_tool_with_progress",
        "description": "Reports progress 0/50/100 of 100",
        "inputSchema": EMPTY_SCHEMA,
    },
    {
        "name": "test_sampling",
        "description": "Asks the client to sample an LLM completion",
        "inputSchema": {
            "type": "object",
            "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
            "required": ["prompt"],
        },
    },
    {
        "name": "test_elicitation",
        "description": "Asks the client to elicit user input",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "The message to show the user"}},
            "required": ["message"],
        },
    },
    {
        "name": "test_elicitation_sep1034_defaults",
        "description": "Elicitation with default values for every primitive type (SEP-1034)",
        "inputSchema": EMPTY_SCHEMA,
    },
    {
        "name": "test_elicitation_sep1330_enums",
        "description": "Elicitation with all five enum schema variants (SEP-1330)",
        "inputSchema": EMPTY_SCHEMA,
    },
    {
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    },
    {
        "name": "test_reconnection",
        "description": "Closes the SSE stream mid-call so the client must reconnect (SEP-1699)",
        "inputSchema": EMPTY_SCHEMA,
    },
]

SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Untitled single-select",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Titled single-select",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Legacy titled enum (deprecated enumNames)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Untitled multi-select",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Titled multi-select",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


def _modern(ctx: ServerRequestContext[Any]) -> bool:
    """A 2026-07-28 session: no server-to-client requests, input is asked for in the result."""
    return ctx.protocol_version >= "2026-07-28"


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


async def _log(ctx: ServerRequestContext[Any], level: types.LoggingLevel, message: str) -> None:
    if LOG_LEVELS.index(level) < LOG_LEVELS.index(_state["log_level"]):
        return
    await ctx.session.send_log_message(  # pyright: ignore[reportDeprecated]
        level=level, data=message, logger="conformance-fixture", related_request_id=ctx.request_id
    )


async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    # Raw, so the schemas go out as written. A 2026-07-28 client (the gateway) is owed the
    # result envelope the typed results fill themselves; older versions sieve it off.
    return {"tools": TOOLS, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
    name = params.name
    args = params.arguments or {}

    if name == "test_simple_text":
        return types.CallToolResult(content=[_text("This is a simple text response for testing.")])

    if name == "test_image_content":
        return types.CallToolResult(
            content=[types.ImageContent(type="image", data=PNG_1X1_RED, mime_type="image/png")]
        )

    if name == "test_audio_content":
        return types.CallToolResult(
            content=[types.AudioContent(type="audio", data=WAV_SILENCE, mime_type="audio/wav")]
        )

    if name == "test_embedded_resource":
        return types.CallToolResult(
            content=[
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri="test://embedded-resource",
                        mime_type="text/plain",
                        text="This is an embedded resource content.",
                    ),
                )
            ]
        )

    if name == "test_multiple_content_types":
        return types.CallToolResult(
            content=[
                _text("Multiple content types test:"),
                types.ImageContent(type="image", data=PNG_1X1_RED, mime_type="image/png"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri="test://mixed-content-resource",
                        mime_type="application/json",
                        text='{"test":"data","value":123}',
                    ),
                ),
            ]
        )

    if name == "test_tool_with_logging":
        await _log(ctx, "info", "Tool execution started")
        await anyio.sleep(0.05)
        await _log(ctx, "info", "Tool processing data")
        await anyio.sleep(0.05)
        await _log(ctx, "info", "Tool execution completed")
        return types.CallToolResult(content=[_text("Tool with logging executed successfully")])

    if name == "test_error_handling":
        return types.CallToolResult(
            content=[_text("This tool intentionally returns an error for testing")], is_error=True
        )

    if name == "test_tool_with_progress":
        # report_progress is a no-op when the caller sent no progressToken.
        await ctx.session.report_progress(0, 100, "Starting")
        await anyio.sleep(0.05)
        await ctx.session.report_progress(50, 100, "Halfway")
        await anyio.sleep(0.05)
        await ctx.session.report_progress(100, 100, "Done")
        return types.CallToolResult(content=[_text("Tool with progress executed successfully")])

    if name == "test_sampling":
        if not ctx.session.check_client_capability(types.ClientCapabilities(sampling=types.SamplingCapability())):
            return types.CallToolResult(content=[_text("Client does not support sampling")], is_error=True)
        prompt = str(args.get("prompt", ""))
        messages = [types.SamplingMessage(role="user", content=_text(prompt))]
        if _modern(ctx):
            # 2026-07-28 has no server-to-client requests: ask inside the result (SEP-2322).
            answer = (params.input_responses or {}).get("sampling")
            if answer is None:
                ask = types.CreateMessageRequestParams(messages=messages, max_tokens=100)
                return types.InputRequiredResult(input_requests={"sampling": types.CreateMessageRequest(params=ask)})
            result = types.CreateMessageResult.model_validate(answer)
        else:
            result = await ctx.session.create_message(  # pyright: ignore[reportDeprecated]
                messages=messages,
                max_tokens=100,
                related_request_id=ctx.request_id,
            )
        content = result.content
        reply = content.text if isinstance(content, types.TextContent) else content.model_dump_json(by_alias=True)
        return types.CallToolResult(content=[_text(f"LLM response: {reply}")])

    if name in ("test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"):
        if not ctx.session.check_client_capability(
            types.ClientCapabilities(elicitation=types.ElicitationCapability())
        ):
            return types.CallToolResult(content=[_text("Client does not support elicitation")], is_error=True)
        if name == "test_elicitation":
            message = str(args.get("message", "Please provide your information"))
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            }
        elif name == "test_elicitation_sep1034_defaults":
            message = "Please review and update the form fields with defaults"
            schema = SEP1034_SCHEMA
        else:
            message = "Please select options from the enum fields"
            schema = SEP1330_SCHEMA
        if _modern(ctx):
            answer = (params.input_responses or {}).get("elicitation")
            if answer is None:
                ask = types.ElicitRequestFormParams(message=message, requested_schema=schema)
                return types.InputRequiredResult(input_requests={"elicitation": types.ElicitRequest(params=ask)})
            result = types.ElicitResult.model_validate(answer)
        else:
            result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        if name == "test_elicitation":
            text = f"User response: action={result.action}, content={_json(result.content)}"
        else:
            text = f"Elicitation completed: action={result.action}, content={_json(result.content)}"
        return types.CallToolResult(content=[_text(text)])

    if name == "json_schema_2020_12_tool":
        return types.CallToolResult(content=[_text(f"JSON Schema 2020-12 tool called with: {_json(args)}")])

    if name == "test_reconnection":
        # Close this request's SSE stream (only possible over Streamable HTTP with an
        # event store and a >= 2025-11-25 client); the result is then delivered when
        # the client reconnects with Last-Event-ID. A no-op elsewhere (e.g. stdio).
        await anyio.sleep(0.1)
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()
        await anyio.sleep(0.1)
        return types.CallToolResult(content=[_text("Reconnection test completed successfully")])

    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# --------------------------------------------------------------------- resources

RESOURCES = [
    types.Resource(
        uri=STATIC_TEXT_URI,
        name="static-text",
        description="A static text resource for testing",
        mime_type="text/plain",
    ),
    types.Resource(
        uri=STATIC_BINARY_URI,
        name="static-binary",
        description="A static binary resource (1x1 PNG) for testing",
        mime_type="image/png",
    ),
    types.Resource(
        uri=WATCHED_URI,
        name="watched-resource",
        description="A resource that can be subscribed to",
        mime_type="text/plain",
    ),
]


async def list_resources(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=RESOURCES)


async def list_resource_templates(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=TEMPLATE_URI,
                name="template-data",
                description="A resource template with an {id} parameter",
                mime_type="application/json",
            )
        ]
    )


async def read_resource(
    ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == STATIC_TEXT_URI:
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(
                uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
            )
        ]
    elif uri == STATIC_BINARY_URI:
        contents = [types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG_1X1_RED)]
    elif uri == WATCHED_URI:
        contents = [types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content.")]
    elif m := TEMPLATE_RE.match(uri):
        rid = m.group(1)
        contents = [
            types.TextResourceContents(
                uri=uri,
                mime_type="application/json",
                text=_json({"id": rid, "templateTest": True, "data": f"Data for ID: {rid}"}),
            )
        ]
    else:
        raise MCPError(code=-32002, message=f"Resource not found: {uri}", data={"uri": uri})
    return types.ReadResourceResult(contents=contents)


async def subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
    _state["subscriptions"].add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    _state["subscriptions"].discard(str(params.uri))
    return types.EmptyResult()


# ----------------------------------------------------------------------- prompts

PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two required arguments",
        arguments=[
            types.PromptArgument(name="arg1", description="First test argument", required=True),
            types.PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that embeds a resource",
        arguments=[types.PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt that includes an image"),
]


async def list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


def _user(content: types.ContentBlock) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
    args = params.arguments or {}
    name = params.name
    if name == "test_simple_prompt":
        messages = [_user(_text("This is a simple prompt for testing."))]
    elif name == "test_prompt_with_arguments":
        for required in ("arg1", "arg2"):
            if required not in args:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Missing required argument: {required}")
        messages = [_user(_text(f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'"))]
    elif name == "test_prompt_with_embedded_resource":
        if "resourceUri" not in args:
            raise MCPError(code=types.INVALID_PARAMS, message="Missing required argument: resourceUri")
        messages = [
            _user(
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri=args["resourceUri"],
                        mime_type="text/plain",
                        text="Embedded resource content for testing.",
                    ),
                )
            ),
            _user(_text("Please process the embedded resource above.")),
        ]
    elif name == "test_prompt_with_image":
        messages = [
            _user(types.ImageContent(type="image", data=PNG_1X1_RED, mime_type="image/png")),
            _user(_text("Please analyze the image above.")),
        ]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {name}")
    description = next((p.description for p in PROMPTS if p.name == name), None)
    return types.GetPromptResult(description=description, messages=messages)


# ---------------------------------------------------------- completion / logging

COMPLETIONS: dict[tuple[str, str], list[str]] = {
    ("test_prompt_with_arguments", "arg1"): ["paris", "park", "party", "test", "testValue1"],
    ("test_prompt_with_arguments", "arg2"): ["hello", "world", "testValue2"],
    ("test_prompt_with_embedded_resource", "resourceUri"): [STATIC_TEXT_URI, STATIC_BINARY_URI, WATCHED_URI],
    (TEMPLATE_URI, "id"): ["1", "2", "3", "123"],
}


async def complete(ctx: ServerRequestContext[Any], params: types.CompleteRequestParams) -> types.CompleteResult:
    key_name = params.ref.name if isinstance(params.ref, types.PromptReference) else params.ref.uri
    candidates = COMPLETIONS.get((key_name, params.argument.name), [])
    values = [v for v in candidates if v.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_level(ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    _state["log_level"] = params.level
    return types.EmptyResult()


# ----------------------------------------------------------------------- server


def build_server() -> Server[Any]:
    server: Server[Any] = Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions="MCP conformance fixture server (server scenarios).",
        on_list_tools=list_tools,  # type: ignore[arg-type]
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        # 2026-07-28 clients (the gateway) subscribe through one subscriptions/listen stream.
        on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),
    )
    # Registered directly: the on_set_logging_level constructor argument is
    # deprecated (2026-07-28) and warns; the handler is what advertises `logging`.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    return server


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    anyio.run(serve_stdio, build_server())


if __name__ == "__main__":
    sys.exit(main())
