import type { RequestContext } from '../../context/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import { sseFrame } from '../../common/http/sse-frame';
import type { ChatStreamDecoder } from '../../providers/chat-format';
import { ChatBridgeStreamHandler } from '../chat/chat-bridge-stream-handler';
import type { ResponsesStreamEncoder } from './chat-bridge/responses-stream-encoder';

/**
 * A chat completion stream (any provider, decoded into OpenAI chunks) written to a
 * Responses client as the typed Responses events: the bridged counterpart of
 * `ResponsesStreamHandler` (see ChatBridgeStreamHandler).
 */
export class ChatToResponsesStreamHandler extends ChatBridgeStreamHandler {
  constructor(
    context: RequestContext,
    decoder: ChatStreamDecoder,
    private readonly responses: ResponsesStreamEncoder,
  ) {
    super(context, decoder, responses);
  }

  /** OpenAI's own stream error event, numbered after the last event the client saw. */
  errorFrame(error: LoggedError): string {
    const body = { type: 'error', code: error.code, message: error.message, param: null, sequence_number: this.responses.nextSequence() };
    return sseFrame(JSON.stringify(body), 'error');
  }

  protected assembled(): Record<string, unknown> {
    return this.responses.response();
  }
}
