import type { EventSourceMessage } from 'eventsource-parser';
import type { RequestContext } from '../../context/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import type { AnswerOutcome } from '../../context/attempt';
import { parseStreamEvent } from '../../providers/stream-event';
import { isObject } from '../../common/config-fields';
import type { SseStreamHandler } from '../upstream/sse-relay';
import { geminiErrorFrame } from './gemini-dialect';
import { GeminiResponseAssembler, usageOfGeminiAnswer } from './gemini-response-assembler';

/**
 * Gemini's stream (`streamGenerateContent?alt=sse`) relayed to a Gemini client: every
 * chunk goes on as it came; the gateway reads them to assemble the response for the log,
 * its usage (the last chunk's `usageMetadata`) and the time to first token. Gemini marks
 * no end of stream: the chunk with a finish reason (or a blocked prompt) is the last. An
 * `error` chunk is Google's way to end a stream with an error: forwarded and logged.
 */
export class GeminiPassthroughStreamHandler implements SseStreamHandler {
  private readonly assembler = new GeminiResponseAssembler();
  private ttftMs: number | null = null;
  private error: LoggedError | null = null;

  constructor(private readonly context: RequestContext) {}

  onEvent(event: EventSourceMessage): string[] {
    const chunk = parseStreamEvent(event.data, 'google');
    const error: unknown = chunk.error;
    if (isObject(error)) {
      this.assembler.finished = true;
      const status = typeof error.status === 'string' && error.status ? error.status : null;
      this.error ??= { type: 'upstream_error', code: status, message: typeof error.message === 'string' ? error.message : 'The provider reported an error' };
    } else if (this.assembler.add(chunk)) this.ttftMs ??= this.context.elapsedMs();
    return [`data: ${event.data}\r\n\r\n`];
  }

  isComplete(): boolean {
    return this.assembler.finished;
  }

  errorFrame(error: LoggedError): string {
    return geminiErrorFrame(error);
  }

  finish(): AnswerOutcome {
    const response = this.assembler.response();
    const served = response.modelVersion;
    return {
      responseBody: response,
      usage: usageOfGeminiAnswer(response),
      servedModel: typeof served === 'string' ? served : null,
      ttftMs: this.ttftMs,
      error: this.error,
    };
  }
}
