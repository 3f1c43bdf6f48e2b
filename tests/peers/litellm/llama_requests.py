"""A LiteLLM proxy callback for the llama peer (llama-cpp-python's server with
--chat_format chatml-function-calling): the Chat Completions requests LiteLLM sends, in the
shape that server handles.

- Its request model wants a string `content` on system and assistant messages (a list of text
  parts, or `null`, is a 500) and its template reads `message.content` under StrictUndefined (a
  missing one is a 500), while LiteLLM drops a `null` content (an assistant message that only
  calls tools) and passes an Anthropic system prompt on as a list of text parts.
- It answers a streamed request with tools and `tool_choice` other than "none" with an empty
  body, so such a request is sent unstreamed and LiteLLM replays the answer as a stream (its
  own converted-stream path, as its interception hooks use it).
- Its answer with tool calls also carries the legacy `function_call` (a dict, its name ending
  in ':'), which LiteLLM's stream replay cannot rebuild (`'dict' object has no attribute
  'name'`, a response.failed on /v1/responses): it is dropped.
"""

from litellm.integrations.custom_logger import CustomLogger
from litellm.types.integrations.custom_logger import HEADROOM_INTERCEPTION_PREFIX, as_converted_stream
from litellm.types.utils import CallTypes

CHAT = frozenset({CallTypes.completion, CallTypes.acompletion})


def _text(content):
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return "" if content is None else content


class LlamaRequests(CustomLogger):
    async def async_pre_call_deployment_hook(self, kwargs, call_type):
        # Only the Chat Completions call: the hook also sees the client's own request (an
        # Anthropic or Responses body) under its own call type first.
        if call_type not in CHAT:
            return kwargs
        for message in kwargs.get("messages") or []:
            if isinstance(message, dict) and message.get("role") in ("system", "assistant"):
                message["content"] = _text(message.get("content"))
        if kwargs.get("stream") and kwargs.get("tools") and kwargs.get("tool_choice") != "none":
            return as_converted_stream(kwargs, HEADROOM_INTERCEPTION_PREFIX)
        return kwargs

    async def async_post_call_success_deployment_hook(self, request_data, response, call_type):
        for choice in getattr(response, "choices", None) or []:
            message = getattr(choice, "message", None)
            if message is not None and getattr(message, "tool_calls", None) and getattr(message, "function_call", None):
                message.function_call = None
        return response


llama_requests = LlamaRequests()
