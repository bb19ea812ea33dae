"""One exchange through the official Python SDK, as a user writes it: only a base URL and an API key.

usage: sdk_client.py <openai|anthropic> <plain|stream|tool> <base_url> <api_key> <model>
Prints one JSON object: {"text": the final answer, "tool_calls": names the model called}.
"""
import json
import sys

sdk, mode, base_url, api_key, model = sys.argv[1:6]
WEATHER_PROMPT = "What is the weather in Paris? Use the tool."
TOOL_RESULT = '{"temperature_c": 21, "sky": "clear"}'


def openai_exchange():
    from openai import OpenAI

    client = OpenAI(base_url=base_url + "/v1", api_key=api_key, max_retries=0)
    if mode == "plain":
        answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say hello"}])
        return {"text": answer.choices[0].message.content, "tool_calls": []}
    if mode == "stream":
        text = ""
        with client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say hello"}], stream=True, stream_options={"include_usage": True}) as stream:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
        return {"text": text, "tool_calls": []}
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather by city", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}]
    messages = [{"role": "user", "content": WEATHER_PROMPT}]
    first = client.chat.completions.create(model=model, messages=messages, tools=tools)
    calls = first.choices[0].message.tool_calls or []
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    for call in calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": TOOL_RESULT})
    final = client.chat.completions.create(model=model, messages=messages, tools=tools)
    return {"text": final.choices[0].message.content, "tool_calls": [c.function.name for c in calls], "arguments": [json.loads(c.function.arguments) for c in calls]}


def anthropic_exchange():
    from anthropic import Anthropic

    client = Anthropic(base_url=base_url, api_key=api_key, max_retries=0)
    if mode == "plain":
        answer = client.messages.create(model=model, max_tokens=256, messages=[{"role": "user", "content": "Say hello"}])
        return {"text": "".join(b.text for b in answer.content if b.type == "text"), "tool_calls": []}
    if mode == "stream":
        with client.messages.stream(model=model, max_tokens=256, messages=[{"role": "user", "content": "Say hello"}]) as stream:
            text = "".join(stream.text_stream)
        return {"text": text, "tool_calls": []}
    tools = [{"name": "get_weather", "description": "Weather by city", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}]
    messages = [{"role": "user", "content": WEATHER_PROMPT}]
    first = client.messages.create(model=model, max_tokens=256, messages=messages, tools=tools)
    uses = [b for b in first.content if b.type == "tool_use"]
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id, "content": TOOL_RESULT} for u in uses]})
    final = client.messages.create(model=model, max_tokens=256, messages=messages, tools=tools)
    return {"text": "".join(b.text for b in final.content if b.type == "text"), "tool_calls": [u.name for u in uses], "arguments": [u.input for u in uses], "stop_reason": first.stop_reason}


print(json.dumps(openai_exchange() if sdk == "openai" else anthropic_exchange()))
