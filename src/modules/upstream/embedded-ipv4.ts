import { isIPv6 } from 'node:net';

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that carry one
 * (RFC 6052, RFC 3056, RFC 4291): such an address reaches, through a translator or a
 * tunnel, the IPv4 host it embeds, so the host policy judges it by that host.
 *
 * - IPv4-mapped `::ffff:0:0/96` and IPv4-compatible `::/96` (`::7f00:1`, `::127.0.0.1`);
 *   `::` and `::1` are the unspecified and loopback addresses, judged as themselves
 * - NAT64 `64:ff9b::/96` and local-use `64:ff9b:1::/48` (the IPv4 in the last 32 bits,
 *   as a /96 translator prefix puts it)
 * - 6to4 `2002::/16` (the IPv4 in bits 16 to 47)
 */
export function embeddedIpv4(address: string): string | null {
  const words = ipv6Words(address);
  if (!words) return null;
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  const last32 = () => dotted(words[6], words[7]);
  if (zeros(0, 5) && (words[5] === 0xffff || words[5] === 0)) {
    if (words[5] === 0 && words[6] === 0 && words[7] <= 1) return null;
    return last32();
  }
  if (words[0] === 0x64 && words[1] === 0xff9b && (zeros(2, 6) || words[2] === 1)) return last32();
  if (words[0] === 0x2002) return dotted(words[1], words[2]);
  return null;
}

function dotted(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (a zone index dropped, a trailing dotted quad read), or null for anything else. */
export function ipv6Words(address: string): number[] | null {
  const withoutZone = address.replace(/%.*$/, '');
  if (!isIPv6(withoutZone)) return null;
  // `::1.2.3.4` is `::102:304`: the quad written as the two words it stands for.
  const text = withoutZone.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_quad, a: string, b: string, c: string, d: string) => `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((word) => parseInt(word, 16)));
  const gap = text.indexOf('::');
  if (gap === -1) return parse(text);
  const left = parse(text.slice(0, gap));
  const right = parse(text.slice(gap + 2));
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
