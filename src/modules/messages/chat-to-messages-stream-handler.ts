import type { RequestContext } from '../../context/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import { anthropicErrorFrame } from '../../common/errors/anthropic-error';
import type { ChatStreamDecoder } from '../../providers/chat-format';
import { ChatBridgeStreamHandler } from '../chat/chat-bridge-stream-handler';
import { AnthropicStreamEncoder } from './chat-bridge/anthropic-stream-encoder';

/**
 * A chat completion stream (any provider, decoded into OpenAI chunks) written to an
 * Anthropic client as Anthropic's events (see ChatBridgeStreamHandler).
 */
export class ChatToMessagesStreamHandler extends ChatBridgeStreamHandler {
  private readonly messages: AnthropicStreamEncoder;

  constructor(context: RequestContext, decoder: ChatStreamDecoder, model: string, thinking = false) {
    const encoder = new AnthropicStreamEncoder(model, thinking);
    super(context, decoder, encoder);
    this.messages = encoder;
  }

  errorFrame(error: LoggedError): string {
    return anthropicErrorFrame(error);
  }

  protected assembled(): Record<string, unknown> {
    return this.messages.message();
  }
}
