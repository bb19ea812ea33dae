import type { EventSourceMessage } from 'eventsource-parser';
import type { RequestContext } from '../../context/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import type { AnswerOutcome } from '../../context/attempt';
import { sseFrame } from '../../common/http/sse-frame';
import { usageFromOpenAIResponse } from '../../providers/openai-usage';
import { parseStreamEvent } from '../../providers/stream-event';
import type { SseStreamHandler } from '../upstream/sse-relay';

/** The events that end a Responses stream, each carrying the final response object. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/**
 * Snapshots the log needs only if no final event comes: each carries the whole response
 * object so far (with the request's instructions and tools, tens of KB for an agent), so
 * they are parsed only then. Their `sequence_number` comes first and is read on its own.
 */
const SNAPSHOT_EVENTS = new Set(['response.created', 'response.in_progress']);
const LEADING_SEQUENCE = /^\{"type":"response\.[a-z_]+","sequence_number":(\d+),/;

/**
 * A Responses API stream: every typed event is forwarded as it came (its `event:` name
 * and data untouched); the gateway reads them only to note time to first token and,
 * from the final event, the response object and its usage for the log.
 */
export class ResponsesStreamHandler implements SseStreamHandler {
  /** The newest response snapshot: the final one, or what `response.created` / `in_progress` said. */
  private response: Record<string, any> | null = null;
  /** A snapshot's data not parsed yet (SNAPSHOT_EVENTS): newer than `response` when set. */
  private snapshotData: string | null = null;
  private complete = false;
  private lastSequence = -1;
  private ttftMs: number | null = null;
  private error: LoggedError | null = null;

  constructor(private readonly context: RequestContext) {}

  onEvent(event: EventSourceMessage): string[] {
    const sequence = event.event && SNAPSHOT_EVENTS.has(event.event) ? LEADING_SEQUENCE.exec(event.data) : null;
    if (sequence) {
      this.lastSequence = Number(sequence[1]);
      this.snapshotData = event.data;
      return [sseFrame(event.data, event.event)];
    }
    const data = parseStreamEvent(event.data);
    const type = typeof data.type === 'string' ? data.type : event.event;
    if (typeof data.sequence_number === 'number') this.lastSequence = data.sequence_number;
    if (type?.endsWith('.delta')) this.ttftMs ??= this.context.elapsedMs();
    if (data.response && typeof data.response === 'object') {
      this.response = data.response;
      this.snapshotData = null;
    }
    if (type && FINAL_EVENTS.has(type)) {
      this.complete = true;
      const error = this.response?.error;
      if (type === 'response.failed') {
        this.error ??= { type: 'upstream_error', code: error?.code ?? 'response_failed', message: String(error?.message ?? 'The response failed') };
      }
    } else if (type === 'error') {
      // The provider's own error event ends the stream: forward it, and the log says why.
      this.complete = true;
      this.error ??= { type: 'upstream_error', code: data.code ?? null, message: String(data.message ?? 'The provider reported an error') };
    }
    return [sseFrame(event.data, event.event)];
  }

  isComplete(): boolean {
    return this.complete;
  }

  /** OpenAI's own stream error event, numbered after the last event the client saw. */
  errorFrame(error: LoggedError): string {
    const body = { type: 'error', code: error.code, message: error.message, param: null, sequence_number: this.lastSequence + 1 };
    return sseFrame(JSON.stringify(body), 'error');
  }

  finish(): AnswerOutcome {
    const response = this.snapshotData === null ? this.response : (snapshotResponse(this.snapshotData) ?? this.response);
    return {
      responseBody: response,
      usage: usageFromOpenAIResponse(response),
      servedModel: typeof response?.model === 'string' ? response.model : null,
      ttftMs: this.ttftMs,
      error: this.error,
    };
  }
}

/** The response object of a snapshot event's data, or null when it holds none. */
function snapshotResponse(data: string): Record<string, unknown> | null {
  try {
    const { response } = parseStreamEvent(data) as { response?: unknown };
    return response && typeof response === 'object' ? (response as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
