import { Injectable } from '@nestjs/common';
import { createInterface } from 'node:readline';
import { SecretBox } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ApiKeyPrincipal } from '../../context/caller';
import type { RequestContext } from '../../context/request-context';
import type { RouteTarget } from '../../context/route-plan';
import type { BatchHttp, NativeBatchApi, NativeBatchState, NativeBatchSubmission } from '../../providers/native-batches';
import { ProviderRegistry } from '../../providers/registry';
import type { UpstreamRequest } from '../../providers/upstream-request';
import { KeyLookupService } from '../keys/key-lookup.service';
import { requestedMcpServers } from '../mcp/mcp-tool-loop';
import { RouteResolver } from '../routing/route-resolver';
import { type AbortedBy, UpstreamAttempt } from '../upstream/upstream-attempt';
import type { NewLine } from './batch-lines';
import type { BatchRow, BatchShape } from './batch-shapes';

/** A batch run at its provider: where it goes (the target, with its credential), the provider's Batch API, and how to reach it. */
export interface NativeRun {
  target: RouteTarget;
  api: NativeBatchApi;
}

/** A stored native batch's run, re-resolved as the key that created it, with what its log rows need. */
export interface StoredRun extends NativeRun {
  principal: ApiKeyPrincipal;
  /** The routing headers the batch was created with (unsealed; the log redacts them). */
  headers: Record<string, string>;
}

/**
 * Which batches run natively, at their provider's Batch API (CONTRACT section 17), and the
 * way there. A batch runs natively when it is routed to one target named directly (a
 * virtual key, or `x-gateway-provider` with its credential) whose provider has batches in
 * the batch's shape: OpenAI's shape at `openai` or `azure-openai`, Anthropic's at
 * `anthropic`. A config (several targets, fallbacks, guardrails, a cache), a `@slug/model`
 * prefix (each line may name another key) and MCP tools need the gateway to run each line:
 * such a batch is run line by line (BatchRunner), as is one whose window the provider does
 * not take. Every call to the provider goes through UpstreamAttempt, so that the host
 * policy, the adapter's authorization and signature and the credential scrubber apply.
 */
@Injectable()
export class NativeBatches {
  constructor(
    private readonly resolver: RouteResolver,
    private readonly registry: ProviderRegistry,
    private readonly attempts: UpstreamAttempt,
    private readonly keys: KeyLookupService,
    private readonly box: SecretBox,
  ) {}

  /** How a batch being created runs natively (its context already routed), or null: the gateway runs it. */
  async runOf(context: RequestContext, shape: BatchShape, completionWindow: string): Promise<NativeRun | null> {
    const plan = context.route!;
    if (plan.via !== 'virtual_key' && plan.via !== 'provider_header') return null;
    if (requestedMcpServers(context)) return null;
    const target = await this.resolver.resolveLeaf(plan.root, plan);
    const api = this.registry.get(target.provider).batches;
    if (!api || api.shape !== shape) return null;
    // OpenAI's (and Azure's) native batches take "24h" only: a batch with another window is run by the gateway, which keeps any window.
    if (!api.windows.includes(completionWindow)) return null;
    return { target, api };
  }

  /** Lines naming a model the target's virtual key does not allow fail alone (not sent), as their synchronous call would. */
  allowedLines(run: NativeRun, lines: NewLine[]): NewLine[] {
    const allowed = run.target.allowedModels;
    if (!allowed) return lines;
    return lines.map((line) => {
      const model = line.body?.model;
      if (!line.body || line.error || (typeof model === 'string' && allowed.includes(model))) return line;
      return { ...line, error: { code: 'model_not_allowed', message: `Model '${String(model)}' is not allowed for this virtual key` } };
    });
  }

  /** Creates the batch at the provider; its refusal throws (the provider's answer, passed through to the client). */
  async submit(run: NativeRun, batch: NativeBatchSubmission, caller: AbortedBy): Promise<NativeBatchState> {
    return run.api.submit(batch, await this.attempts.authorized(run.target), this.http(run, caller));
  }

  async poll(run: NativeRun, id: string, caller: AbortedBy): Promise<NativeBatchState> {
    return run.api.poll(id, await this.attempts.authorized(run.target), this.http(run, caller));
  }

  async *results(run: NativeRun, state: NativeBatchState, caller: AbortedBy) {
    yield* run.api.results(state, await this.attempts.authorized(run.target), this.http(run, caller));
  }

  async cancel(run: NativeRun, id: string, caller: AbortedBy): Promise<void> {
    await run.api.cancel(id, await this.attempts.authorized(run.target), this.http(run, caller));
  }

  /**
   * A stored native batch's run: its sealed routing headers resolved again as the key that
   * created it, so that its credential is the one it was created with (a virtual key
   * rotated since: the new one). Null when that key is gone (revoked).
   */
  async storedRun(row: BatchRow): Promise<StoredRun | null> {
    const principal = await this.keys.apiKeyByHash(row.key_hash);
    if (!principal) return null;
    const headers = JSON.parse(this.box.decrypt(row.route_headers)) as Record<string, string>;
    const plan = await this.resolver.resolve(headers, undefined, principal);
    const target = await this.resolver.resolveLeaf(plan.root, plan);
    const api = this.registry.get(target.provider).batches;
    if (target.provider !== row.provider || !api)
      throw GatewayError.invalidRequest(
        `Batch ${row.id} runs at ${row.provider}, but its route now leads to ${target.provider}: it is followed where it runs only`,
        null,
        'batch_route_changed',
      );
    return { target, api, principal, headers };
  }

  /** The provider's calls of one run, through the upstream client: aborted with `caller` (a client's request, or the poller's shutdown). */
  private http(run: NativeRun, caller: AbortedBy): BatchHttp {
    const send = (request: UpstreamRequest) => this.attempts.sendRequest(caller, run.target, request);
    return {
      json: async (request) => (await this.attempts.readJsonObject(caller, await send(request))).json,
      lines: async function* (request) {
        const sent = await send(request);
        // A results file may take longer to read than one request's timeout: only a stall between its chunks (the body timeout) ends it.
        sent.response.clearTimeout();
        for await (const line of createInterface({ input: sent.response.body, crlfDelay: Infinity })) {
          if (line.trim()) yield sent.scrubber.text(line);
        }
      },
    };
  }
}
