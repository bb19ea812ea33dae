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
    return [parseStreamEvent(event.data)];
  }

  isComplete(): boolean {
    return this.done;
  }
}
