import { Injectable } from '@nestjs/common';
import { StringDecoder } from 'node:string_decoder';
import { ConfigService } from '@nestjs/config';
import { createParser, EventSourceMessage } from 'eventsource-parser';
import { Observable, Subscriber } from 'rxjs';
import type { RequestContext } from '../../common/context/request-context';
import { GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../../common/http/gateway-result';
import type { Environment } from '../../config/environment';
import { ProviderRegistry } from '../../providers/registry';
import { UpstreamClient, UpstreamResponse } from '../upstream/upstream-client';
import { ChatStreamAssembler } from './chat-stream-assembler';
import type { ChatCompletionCreateDto } from './dto/chat-completion-create.dto';
import { usageFromOpenAI } from './openai-usage';

const sseFrame = (data: string, event?: string) => (event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);

function errorFrame(type: string, code: string, message: string): string {
  return sseFrame(JSON.stringify({ error: { message, type, param: null, code } }));
}

/**
 * `chat.completions`: prepares the body for the routed provider, sends it, and turns
 * the answer into a GatewayResult (bytes passed through, or SSE frames as they come),
 * noting usage, the assembled response and time to first token on the context.
 */
@Injectable()
export class ChatService {
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly upstream: UpstreamClient,
    config: ConfigService<Environment, true>,
  ) {
    this.defaultTimeoutMs = config.get('UPSTREAM_TIMEOUT_MS', { infer: true });
  }

  async create(context: RequestContext, body: ChatCompletionCreateDto): Promise<GatewayResult> {
    const target = context.route!.target;
    const chat = this.registry.get(target.provider).chatCompletions;
    if (!chat) throw GatewayError.invalidRequest(`Provider ${target.provider} does not offer chat completions`, 'model');

    const upstreamBody: Record<string, unknown> = { ...body, model: target.model ?? body.model, ...target.overrideParams };
    const model = String(upstreamBody.model);
    if (target.allowedModels && !target.allowedModels.includes(model)) {
      throw GatewayError.permission(`Model '${model}' is not allowed for this virtual key`, 'model_not_allowed');
    }
    context.model = model;
    context.isStream = body.stream === true;
    context.requestBody = body;
    context.user = body.user ?? context.user;
    context.targetIndex = target.targetIndex;

    // Usage in streams comes only on request; ask for it and hide it if the client did not.
    const clientWantsUsage = body.stream_options?.include_usage === true;
    if (context.isStream && !clientWantsUsage) upstreamBody.stream_options = { ...body.stream_options, include_usage: true };

    const timeoutMs = target.requestTimeoutMs ?? this.defaultTimeoutMs;
    const response = await this.upstream.send(chat.buildRequest(upstreamBody, target), { abort: context.abort, timeoutMs });
    const contentType = String(response.headers['content-type'] ?? '');

    if (response.status >= 400) {
      const raw = await this.upstream.readBody(response, timeoutMs, context.abort.signal);
      const retryAfter = response.headers['retry-after'];
      throw new UpstreamHttpError(response.status, raw, contentType || 'application/json', retryAfter ? { 'retry-after': String(retryAfter) } : {});
    }
    if (context.isStream && contentType.includes('text/event-stream')) {
      response.clearTimeout(); // from here the idle timeout between chunks applies
      return { kind: 'sse', status: response.status, frames: this.relayStream(context, response, !clientWantsUsage, timeoutMs) };
    }

    const raw = await this.upstream.readBody(response, timeoutMs, context.abort.signal);
    let json: Record<string, any>;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      throw GatewayError.upstreamMalformed(`The provider answered ${response.status} with a body that is not JSON`);
    }
    context.responseBody = json;
    context.usage = usageFromOpenAI(json.usage);
    context.servedModel = typeof json.model === 'string' ? json.model : null;
    return { kind: 'json', status: response.status, body: raw };
  }

  /**
   * Forwards each upstream SSE event as soon as it is parsed. The teardown (client
   * gone) destroys the upstream body, which aborts the provider request.
   */
  private relayStream(context: RequestContext, response: UpstreamResponse, hideUsage: boolean, idleTimeoutMs: number): Observable<string> {
    return new Observable<string>((subscriber: Subscriber<string>) => {
      const assembler = new ChatStreamAssembler();
      let sawDone = false;
      let ended = false;

      const finish = () => {
        if (ended) return;
        ended = true;
        context.usage = assembler.usage;
        context.responseBody = assembler.result();
        const served = context.responseBody as { model?: unknown };
        context.servedModel = typeof served.model === 'string' ? served.model : null;
      };
      const fail = (type: string, code: string, message: string) => {
        context.error ??= { type, code, message };
        subscriber.next(errorFrame(type, code, message));
      };

      const onEvent = (event: EventSourceMessage) => {
        if (event.data === '[DONE]') {
          sawDone = true;
          subscriber.next(sseFrame('[DONE]'));
          return;
        }
        let chunk: Record<string, any>;
        try {
          chunk = JSON.parse(event.data);
        } catch {
          subscriber.next(sseFrame(event.data, event.event));
          return;
        }
        if (chunk.error) context.error ??= { type: 'upstream_error', code: chunk.error.code ?? null, message: String(chunk.error.message) };
        if (assembler.add(chunk)) context.markFirstToken();
        if (hideUsage && chunk.usage) {
          if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return; // the extra usage-only chunk
          delete chunk.usage;
          subscriber.next(sseFrame(JSON.stringify(chunk), event.event));
          return;
        }
        subscriber.next(sseFrame(event.data, event.event));
      };
      const parser = createParser({ onEvent });

      const body = response.body;
      // The timeout also bounds each silence between chunks (undici's own body timer is too coarse for this).
      let idle: NodeJS.Timeout | undefined;
      const armIdleTimer = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          fail('timeout_error', 'request_timeout', `The provider stream went silent for ${idleTimeoutMs} ms`);
          finish();
          body.destroy();
          subscriber.complete();
        }, idleTimeoutMs);
      };
      armIdleTimer();
      const decoder = new StringDecoder('utf8'); // a character may span two network chunks
      body.on('data', (bytes: Buffer) => {
        armIdleTimer();
        parser.feed(decoder.write(bytes));
      });
      body.on('close', () => clearTimeout(idle));
      body.on('end', () => {
        if (ended) return;
        if (!sawDone) fail('upstream_error', 'upstream_stream_incomplete', 'The provider stream ended before [DONE]');
        finish();
        subscriber.complete();
      });
      body.on('error', (error: Error & { code?: string }) => {
        if (ended || (context.abort.signal.aborted && !response.timedOut())) return;
        if (error.code === 'UND_ERR_BODY_TIMEOUT') fail('timeout_error', 'request_timeout', 'The provider stream went silent');
        else fail('upstream_error', 'upstream_stream_broken', `The provider stream broke off (${error.code ?? error.message})`);
        finish();
        subscriber.complete();
      });

      return () => {
        if (ended) return;
        context.error ??= { type: 'client_error', code: 'client_closed_request', message: 'The client closed the connection mid-stream' };
        body.destroy();
        finish();
      };
    });
  }
}
