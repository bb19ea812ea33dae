/**
 * What an HTTP field value may hold (RFC 9110: visible ASCII, space, tab, and obs-text,
 * i.e. Latin-1): undici refuses anything else when it sends. A value taken from data (a
 * config, a virtual key, an MCP server) is checked when it is given, so that a bad one is a
 * 400 naming its field there and then, rather than a 502 on every request that uses it.
 */
const NOT_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

export function isHeaderValue(value: string): boolean {
  return !NOT_HEADER_CHAR.test(value);
}

/** The end of a 400's message for a field that is not a header value. */
export const HEADER_VALUE_RULE = 'must not contain line breaks, other control characters or characters outside Latin-1 (it is sent as an HTTP header)';
