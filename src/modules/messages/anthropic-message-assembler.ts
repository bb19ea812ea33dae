/**
 * Rebuilds the `message` an Anthropic stream amounts to, from its events: what the
 * log stores as the response of a streamed `/v1/messages` request. Blocks it does not
 * know (mcp_tool_use, mcp_tool_result, server tool results …) arrive whole in
 * `content_block_start` and are kept as they came.
 */
export class AnthropicMessageAssembler {
  private readonly base: Record<string, any> = { type: 'message', role: 'assistant', content: [] };
  private readonly blocks: Record<string, any>[] = [];
  /** Tool input arrives as JSON text in fragments; parsed when its block stops. */
  private readonly partialJson = new Map<number, string>();
  private usage: Record<string, any> = {};

  /** Adds one event; returns true when it carried generated content (for time to first token). */
  add(event: Record<string, any>): boolean {
    switch (event.type) {
      case 'message_start': {
        const { content: _content, usage, ...message } = event.message ?? {};
        Object.assign(this.base, message);
        this.usage = { ...usage };
        return false;
      }
      case 'content_block_start':
        this.blocks[event.index] = { ...event.content_block };
        return true;
      case 'content_block_delta':
        return this.delta(event.index, event.delta ?? {});
      case 'content_block_stop': {
        const json = this.partialJson.get(event.index);
        if (json !== undefined && this.blocks[event.index]) this.blocks[event.index].input = parseOr(json);
        return false;
      }
      case 'message_delta':
        Object.assign(this.base, event.delta);
        // Newer API versions repeat the input and cache counts here; keep whatever is sent.
        for (const [key, value] of Object.entries(event.usage ?? {})) if (value !== null && value !== undefined) this.usage[key] = value;
        return false;
      default:
        return false;
    }
  }

  message(): Record<string, unknown> {
    return { ...this.base, content: this.blocks.filter(Boolean), usage: this.usage };
  }

  private delta(index: number, delta: Record<string, any>): boolean {
    const block = (this.blocks[index] ??= { type: 'text', text: '' });
    switch (delta.type) {
      case 'text_delta':
        block.text = (block.text ?? '') + delta.text;
        return true;
      case 'input_json_delta':
        this.partialJson.set(index, (this.partialJson.get(index) ?? '') + delta.partial_json);
        return true;
      case 'thinking_delta':
        block.thinking = (block.thinking ?? '') + delta.thinking;
        return true;
      case 'signature_delta':
        block.signature = delta.signature;
        return false;
      case 'citations_delta':
        (block.citations ??= []).push(delta.citation);
        return false;
      default:
        return false;
    }
  }
}

/** The parsed JSON, or the text itself when it does not parse (a cut stream). */
function parseOr(json: string): unknown {
  try {
    return json === '' ? {} : JSON.parse(json);
  } catch {
    return json;
  }
}
