import type { EventSourceMessage } from 'eventsource-parser';
import type { UpstreamRequest } from '../../providers/provider-adapter';
import type { ProviderTarget } from '../../providers/provider-target';
import { isSecretProviderOption } from '../keys/provider-option-secrets';
import { REDACTED } from '../logging/redaction';
import type { SseStreamHandler } from './sse-relay';

/** Request headers whose whole value is a credential (the key, AWS's session token). */
const CREDENTIAL_HEADERS = ['api-key', 'x-api-key', 'x-goog-api-key', 'x-amz-security-token'];
/** `Authorization` and its proxy twin: the credential is what follows the scheme (`Bearer <key>`). */
const AUTHORIZATION_HEADERS = ['authorization', 'proxy-authorization'];
/**
 * Shorter values are not searched for: replacing a few common characters everywhere would
 * garble answers, and no provider issues credentials that short.
 */
const MIN_SECRET_LENGTH = 8;

/**
 * Hides the credentials the gateway sent upstream in one attempt from what the provider
 * answers (CONTRACT section 15): some servers quote the key they were given in an error.
 * Exact occurrences of each (and of its JSON-escaped form) become `[REDACTED]` in bodies,
 * headers and stream events, before the client or the log sees them. Built once per
 * attempt from the request as sent; with nothing to hide every method returns its input.
 */
export class CredentialScrubber {
  static readonly NONE = new CredentialScrubber([]);

  private readonly needles: Buffer[];

  private constructor(private readonly secrets: string[]) {
    this.needles = secrets.map((secret) => Buffer.from(secret, 'utf8'));
  }

  /** The credentials of a signed request: its credential headers, the target's key and secret options. */
  static of(request: UpstreamRequest, target: ProviderTarget): CredentialScrubber {
    const found = new Set<string>();
    const add = (value: string | null | undefined) => {
      if (!value || value.length < MIN_SECRET_LENGTH) return;
      // As a JSON string quotes it too (`"` and `\` escaped, and `/` by some servers, PHP's among them).
      const json = JSON.stringify(value).slice(1, -1);
      for (const form of [value, json, json.replace(/\//g, '\\/')]) found.add(form);
    };
    for (const [name, value] of Object.entries(request.headers)) {
      const lower = name.toLowerCase();
      if (CREDENTIAL_HEADERS.includes(lower)) add(value);
      else if (AUTHORIZATION_HEADERS.includes(lower)) add(value.slice(value.indexOf(' ') + 1));
    }
    // A service account's JSON is exchanged for a token (sent, so in the headers above), never sent itself.
    if (target.apiKey && !target.apiKey.trimStart().startsWith('{')) add(target.apiKey);
    add(target.accessToken);
    for (const [name, value] of Object.entries(target.providerOptions)) if (isSecretProviderOption(name)) add(value);
    if (found.size === 0) return CredentialScrubber.NONE;
    // Longest first: a key that contains another is hidden whole.
    return new CredentialScrubber([...found].sort((a, b) => b.length - a.length));
  }

  text(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** Bytes searched as bytes (no decoding of a body that holds no credential, the common case). */
  bytes(body: Buffer): Buffer {
    let out = body;
    for (const needle of this.needles) {
      let at = out.indexOf(needle);
      if (at === -1) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at !== -1) {
        parts.push(out.subarray(from, at), REDACTED_BYTES);
        from = at + needle.length;
        at = out.indexOf(needle, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  }

  headers(headers: Record<string, string>): Record<string, string> {
    if (this.secrets.length === 0) return headers;
    return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, this.text(value)]));
  }

  /**
   * A stream handler that sees every event with the credentials hidden: its frames for the
   * client and the answer it assembles for the log are built from what it was given. Events
   * are whole here, so a key split across two network chunks is still found.
   */
  stream(handler: SseStreamHandler): SseStreamHandler {
    if (this.secrets.length === 0) return handler;
    return {
      onEvent: (event: EventSourceMessage) =>
        handler.onEvent({ ...event, data: this.text(event.data), ...(event.event !== undefined && { event: this.text(event.event) }) }),
      isComplete: () => handler.isComplete(),
      errorFrame: (error) => handler.errorFrame(error),
      finish: () => handler.finish(),
    };
  }
}

const REDACTED_BYTES = Buffer.from(REDACTED, 'utf8');
