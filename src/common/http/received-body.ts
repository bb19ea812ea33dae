/**
 * A request body forwarded as the bytes it arrived as. Serialising a coding agent's
 * 80 KB conversation again, then encoding the text into bytes for the socket, took about
 * a tenth of the gateway's CPU per request, for JSON the provider gets either way when
 * the gateway changed nothing.
 *
 * The rule: a body is unchanged while it is the very object the body parser made. The
 * gateway changes a body by making a new object (routing's model and the config's
 * `override_params`, `stream_options` asked for usage, MCP tools, a prompt template, any
 * translation), so a changed body is never that object; the one change written into a
 * body in place, an input guardrail's redaction, calls `forgetReceivedBytes` first.
 */
const receivedBytes = new WeakMap<object, Buffer>();

/**
 * Set by the body parser, for a body whose bytes say exactly what its object does: valid
 * UTF-8 (else the parser replaced characters) and no key twice in an object (else the
 * parser kept the last, and a provider might read the first).
 */
export function keepReceivedBytes(body: object, bytes: Buffer): void {
  receivedBytes.set(body, bytes);
}

/** Before the gateway writes into a received body in place: from then on it is serialised. */
export function forgetReceivedBytes(body: object): void {
  receivedBytes.delete(body);
}

/**
 * The JSON of a body an adapter sends as it is (a provider of the client's own wire
 * format): the bytes received when `body` is the client's body, unchanged, else its
 * serialisation. The one place that decides whether a request goes out as received.
 */
export function jsonPayload(body: Record<string, unknown>): string | Buffer {
  return receivedBytes.get(body) ?? JSON.stringify(body);
}
