import { argsText, Conversation, imagePart, isObject, Part, str } from './model';

/** An MCP tool call the gateway ran (operation `mcp.tools.call`): `{server, tool, arguments}` in, the MCP result out. */
export function readToolCall(request: unknown, response: unknown): Conversation | null {
  if (!isObject(request) || !str(request.tool)) return null;
  const result = isObject(response) ? response : null;
  const content: Part[] = Array.isArray(result?.content)
    ? result.content.filter(isObject).map((item): Part => {
        if (item.type === 'text') return { type: 'text', text: str(item.text) ?? '' };
        if (item.type === 'image') return imagePart(`data:${str(item.mimeType) ?? 'image/png'};base64,${str(item.data) ?? ''}`);
        return { type: 'other', label: str(item.type) ?? 'content', value: item };
      })
    : [];
  return {
    format: 'MCP tool call',
    messages: [
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: null, name: `${str(request.server) ?? 'mcp'}: ${request.tool}`, args: argsText(request.arguments) }],
      },
    ],
    tools: [],
    answers: result
      ? [{ role: 'tool', parts: [{ type: 'tool_result', id: null, name: str(request.tool), parts: content, isError: result.isError === true }] }]
      : [],
    finish: null,
  };
}
