/**
 * Finding personal data in text, for the `pii` check. Every pattern here is linear: its
 * quantifiers are bounded or unambiguous and each start is anchored by a look-behind, so
 * unlike the `regex` check there is no length cap: a long text is searched (and redacted)
 * whole.
 *
 * All detectors always run and a character belongs to the first kind that claims it, in
 * the order of DETECTORS, whichever kinds the check asked for. That is what keeps an IP
 * address or a card number from being reported as a phone number when only `phone` is
 * asked for.
 */
export const PII_KINDS = ['email', 'phone', 'card', 'ipv4', 'ssn'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export interface PiiFinding {
  kind: PiiKind;
  start: number;
  end: number;
}

interface Detector {
  kind: PiiKind;
  regex: RegExp;
  accept?(match: string): boolean;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';

const DETECTORS: Detector[] = [
  // Local part up to 64 characters, up to 8 dot-separated domain labels, then a TLD.
  { kind: 'email', regex: /(?<![\w.%+-])[\w.%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g },
  // 13 to 19 digits, single spaces or dashes between them allowed, not part of a longer
  // number nor after a '+' (a phone number); one number in ten passes the Luhn checksum
  // by chance, so it only sorts out the rest.
  { kind: 'card', regex: /(?<![\d+][ -]?)\d(?:[ -]?\d){12,18}(?![ -]?\d)/g, accept: (m) => luhn(m.replace(/\D/g, '')) },
  // US SSN written AAA-GG-SSSS or AAA GG SSSS, without the numbers never issued
  // (area 000, 666, 9xx; group 00; serial 0000). Nine bare digits are too often something else.
  { kind: 'ssn', regex: /(?<!\d[ -]?)(?!000|666|9\d\d)\d{3}([ -])(?!00)\d{2}\1(?!0000)\d{4}(?![ -]?\d)/g },
  // Four octets 0-255; not the middle of a longer dotted number such as a version 1.2.3.4.5.
  { kind: 'ipv4', regex: new RegExp(`(?<![\\d.])(?:${OCTET}\\.){3}${OCTET}(?!\\.?\\d)`, 'g') },
  // A candidate is digits with optional single separators (space . -) or parentheses
  // between them; `isPhone` then decides. Each repetition takes exactly one digit, so the
  // pattern cannot backtrack into many ways of grouping the same digits. A ':' or '/'
  // right after ends nothing, so "2024-01-15 10:30" is not a phone.
  { kind: 'phone', regex: /(?<![\w+.-])\+?\(?\d(?:[ .-]?\(?\d|\)[ .-]?\d){6,20}(?![\w:/])/g, accept: isPhone },
];

export const PII_PLACEHOLDERS: Record<PiiKind, string> = {
  email: '[REDACTED_EMAIL]',
  phone: '[REDACTED_PHONE]',
  card: '[REDACTED_CARD]',
  ipv4: '[REDACTED_IPV4]',
  ssn: '[REDACTED_SSN]',
};

/** The findings of the given kinds, in text order, never overlapping. */
export function findPii(text: string, kinds: ReadonlySet<PiiKind>): PiiFinding[] {
  const claimed = new Uint8Array(text.length);
  const findings: PiiFinding[] = [];
  for (const detector of DETECTORS) {
    for (const match of text.matchAll(detector.regex)) {
      const start = match.index;
      const end = start + match[0].length;
      if (detector.accept && !detector.accept(match[0])) continue;
      if (claimed.subarray(start, end).some((c) => c === 1)) continue;
      claimed.fill(1, start, end);
      if (kinds.has(detector.kind)) findings.push({ kind: detector.kind, start, end });
    }
  }
  return findings.sort((a, b) => a.start - b.start);
}

/** The text with each finding replaced by its placeholder. */
export function redactPii(text: string, findings: PiiFinding[]): string {
  let out = '';
  let at = 0;
  for (const f of findings) {
    out += text.slice(at, f.start) + PII_PLACEHOLDERS[f.kind];
    at = f.end;
  }
  return out + text.slice(at);
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * 10 to 15 digits (8 to 15 after a leading '+', which marks an international number),
 * written as a phone number is: with a '+', separators or parentheses, since a bare run
 * of ten digits is more often an id or a timestamp. Parentheses must pair up.
 */
function isPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '').length;
  const international = candidate.startsWith('+');
  if (digits > 15 || digits < (international ? 8 : 10)) return false;
  if (!international && !/[ .()-]/.test(candidate)) return false;
  const opens = candidate.split('(').length - 1;
  const closes = candidate.split(')').length - 1;
  return opens === closes && opens <= 1;
}
