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
      throw GatewayError.invalidRequest(`${path} would be ignored (${why}); the config sets strict_params, which refuses any parameter a translation cannot keep`, path, 'strict_params');
    }
    this.names.add(path.replace(/\[\d+\]/g, '[]'));
  }

  /** The ignored fields, in the order first seen. */
  list(): string[] {
    return [...this.names];
  }
}
