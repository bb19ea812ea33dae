import type { EventSourceMessage } from 'eventsource-parser';
import type { ChatCompletionChunk, ChatStreamDecoder } from '../chat-format';
import { parseStreamEvent } from '../stream-event';

/** A chat completion stream in OpenAI's own format: JSON chunks, then `[DONE]`. */
export class OpenAIChatStreamDecoder implements ChatStreamDecoder {
  private done = false;

  onEvent(event: EventSourceMessage): ChatCompletionChunk[] {
    if (event.data === '[DONE]') {
      this.done = true;
      return [];
    }
    // An OpenAI-format provider's chunk goes on as it came: the gateway reads it as the chat format.
    return [parseStreamEvent(event.data) as ChatCompletionChunk];
  }

  isComplete(): boolean {
    return this.done;
  }
}
