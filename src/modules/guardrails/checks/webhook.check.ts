import { isSecretHint } from '../../../common/crypto/secret-box';
import { HEADER_VALUE_RULE, isHeaderValue } from '../../../common/http/header-value';
import { hasUserinfo, isHttpUrl } from '../../../common/http/http-url';
import { CheckDependencies, ParsedCheck, PostJson } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { isInt, isObject, unknownFields } from '../../../common/config-fields';

/**
 * `webhook`: asks a hook of the config's owner. POSTs `{stage, model, texts, metadata}`
 * to `url` with `headers`; the hook answers `{"verdict": true|false, "reason": "..."}`.
 * Anything else fails closed: no answer within `timeout_ms` (default 3000, at most
 * 30000), a network error, a non-2xx status or an answer of another shape is verdict
 * false, with a reason saying which.
 *
 * The request goes through the injected `postJson`, never a client of this file's own, so
 * the gateway's SSRF host policy applies to hooks as it does to providers.
 */
export const DEFAULT_TIMEOUT_MS = 3000;
export const MAX_TIMEOUT_MS = 30_000;
// A hook's reason ends up in the 446 body and the log: keep it to a sentence or two.
const MAX_REASON_LENGTH = 500;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export class WebhookCheck implements GuardrailCheck {
  readonly type = 'webhook';

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
    private readonly postJson: PostJson,
  ) {}

  static parse(params: Record<string, unknown>, path: string, deps: CheckDependencies): ParsedCheck {
    const problems = unknownFields(params, ['url', 'headers', 'timeout_ms'], path);
    const { url, headers = {}, timeout_ms: timeoutMs = DEFAULT_TIMEOUT_MS } = params;
    if (!isHttpUrl(url)) problems.push(`${path}.url must be an http(s) URL`);
    else if (hasUserinfo(url)) problems.push(`${path}.url must not carry user:password@ (send credentials in headers, which are encrypted)`);
    if (!isObject(headers)) problems.push(`${path}.headers must be an object`);
    else {
      for (const [name, value] of Object.entries(headers)) {
        if (!HEADER_NAME.test(name)) problems.push(`${path}.headers.${name} is not a valid header name`);
        else if (typeof value !== 'string') problems.push(`${path}.headers.${name} must be a string`);
        // A stored config's header sent back as the hint a read showed keeps the stored value (encryptConfigSecrets).
        else if (!isHeaderValue(value) && !isSecretHint(value)) problems.push(`${path}.headers.${name} ${HEADER_VALUE_RULE}`);
      }
    }
    if (!isInt(timeoutMs, 1, MAX_TIMEOUT_MS)) problems.push(`${path}.timeout_ms must be an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
    if (problems.length > 0) return { problems };
    return { check: new WebhookCheck(url as string, headers as Record<string, string>, timeoutMs as number, deps.postJson), problems };
  }

  async run(input: CheckInput): Promise<CheckResult> {
    const fail = (reason: string): CheckResult => ({ type: this.type, verdict: false, reason });
    const body = { stage: input.stage, model: input.model, texts: input.texts, metadata: input.metadata };
    let answer: { status: number; json: unknown };
    try {
      answer = await this.callWithTimeout(body);
    } catch (error) {
      if (isTimeout(error)) return fail(`webhook did not answer within ${this.timeoutMs} ms`);
      return fail(`webhook call failed: ${String((error as Error)?.message ?? error).slice(0, MAX_REASON_LENGTH)}`);
    }
    if (answer.status < 200 || answer.status > 299) return fail(`webhook answered HTTP ${answer.status}`);
    const { json } = answer;
    if (!isObject(json) || typeof json.verdict !== 'boolean') return fail('webhook answer is not {"verdict": true|false, "reason": "..."}');
    const reason = typeof json.reason === 'string' && json.reason !== '' ? json.reason.slice(0, MAX_REASON_LENGTH) : `webhook answered verdict ${json.verdict}`;
    return { type: this.type, verdict: json.verdict, reason };
  }

  /** `postJson` is asked to time out too; this timer holds even if it does not. */
  private async callWithTimeout(body: unknown): Promise<{ status: number; json: unknown }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WebhookTimeout()), this.timeoutMs);
    });
    try {
      return await Promise.race([this.postJson(this.url, this.headers, body, this.timeoutMs), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

class WebhookTimeout extends Error {
  override readonly name = 'TimeoutError';
}

/** Ours, or the kind `AbortSignal.timeout` makes a fetch-like postJson reject with. */
const isTimeout = (error: unknown): boolean => (error as { name?: unknown } | null)?.name === 'TimeoutError';
