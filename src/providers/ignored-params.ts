import { GatewayError } from '../common/errors/gateway-error';

/**
 * What a translation drops because it only tunes delivery or caching (CONTRACT section
 * 12: "ignored"), collected while one request is translated for one target. The request
 * path names them in `x-gateway-ignored-params` and in the log row; with the config's
 * `strict_params` each becomes a 400 naming the field instead (`strict`).
 *
 * A translation takes one as an argument and calls `ignore` for each such field; it maps
 * what it can and refuses (a 400) what would change the answer's meaning. Paths are
 * recorded without their indexes (`tools[].eager_input_streaming`), so twenty tools with
 * `cache_control` are one name, not twenty.
 *
 * A path holds the caller's own keys (`metadata.<any key>`), and the list goes out as a
 * response header, where a line break would inject a header and a character past Latin-1
 * makes Node throw. So names are recorded percent-encoded (`fieldName`): the header and
 * the log row carry the same name, and `decodeURIComponent` gives the key back.
 */
export class IgnoredParams {
  private readonly names = new Set<string>();

  constructor(readonly strict = false) {}

  /**
   * `path` is the field as sent (`tools[3].cache_control`), named in the strict 400;
   * `why` says what it tunes and why the target needs no such thing.
   */
  ignore(path: string, why: string): void {
    if (this.strict) {
      throw GatewayError.invalidRequest(
        `${path} would be ignored (${why}); the config sets strict_params, which refuses any parameter a translation cannot keep`,
        path,
        'strict_params',
      );
    }
    this.names.add(fieldName(path.replace(/\[\d+\]/g, '[]')));
  }

  /** The ignored fields, in the order first seen. */
  list(): string[] {
    return [...this.names];
  }
}

/** Any byte but printable ASCII, `%` (the escape itself) and `,` (the header's list separator). */
const UNSAFE_IN_NAME = /[^\x21-\x24\x26-\x2b\x2d-\x7e]/gu;

/**
 * A field path as a header-safe name: every character outside printable ASCII, and `%`
 * and `,`, is percent-encoded as its UTF-8 bytes (`metadata.中` is `metadata.%E4%B8%AD`).
 * A lone surrogate (which `encodeURIComponent` refuses) is encoded as U+FFFD.
 */
export function fieldName(path: string): string {
  return path.replace(UNSAFE_IN_NAME, (ch) => [...Buffer.from(ch, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/**
 * Chat parameters that tune delivery and caching at OpenAI only: a translated provider
 * answers the same without them (it caches prompts its own way), so they are ignored.
 */
export const OPENAI_DELIVERY_PARAMS: Record<string, (value: unknown, _request: unknown, _body: unknown, ignored: IgnoredParams) => void> = {
  prompt_cache_key: (_value, _request, _body, ignored) =>
    ignored.ignore('prompt_cache_key', "it routes to OpenAI's prompt cache; the provider caches prompts its own way"),
  prompt_cache_retention: (_value, _request, _body, ignored) => ignored.ignore('prompt_cache_retention', "it tunes OpenAI's prompt cache"),
  service_tier: (_value, _request, _body, ignored) => ignored.ignore('service_tier', "it chooses OpenAI's processing tier"),
  store: (value, _request, _body, ignored) => {
    if (value !== false) ignored.ignore('store', 'it keeps the completion at OpenAI');
  },
  // OpenAI's tags for stored completions (the end user goes by `user`).
  metadata: (_value, _request, _body, ignored) => ignored.ignore('metadata', 'it tags completions stored at OpenAI'),
};
