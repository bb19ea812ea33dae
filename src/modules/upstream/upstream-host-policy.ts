import { BlockList, isIP, LookupFunction } from 'node:net';
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { embeddedIpv4 } from './embedded-ipv4';

/**
 * Never reachable: link-local (cloud metadata lives there), unspecified, multicast, and
 * the special-purpose ranges no provider can be on (IANA's IPv4 and IPv6 special-purpose
 * registries: documentation, reserved, discard, protocol assignments).
 */
const ALWAYS_DENIED: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'], // Alibaba Cloud metadata
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation (TEST-NET-1)
  ['192.88.99.0', 24, 'ipv4'], // the former 6to4 relay anycast
  ['198.51.100.0', 24, 'ipv4'], // documentation (TEST-NET-2)
  ['203.0.113.0', 24, 'ipv4'], // documentation (TEST-NET-3)
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, and the broadcast address
  ['::', 128, 'ipv6'],
  ['100::', 64, 'ipv6'], // discard-only
  ['2001::', 32, 'ipv6'], // Teredo (the address it reaches is hidden inside)
  ['2001:10::', 28, 'ipv6'], // ORCHID, never routed
  ['2001:20::', 28, 'ipv6'], // ORCHIDv2, never routed
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['3fff::', 20, 'ipv6'], // documentation
  ['5f00::', 16, 'ipv6'], // SRv6 segment identifiers
  ['fe80::', 10, 'ipv6'],
  ['fd00:ec2::254', 128, 'ipv6'], // AWS metadata over IPv6
  ['ff00::', 8, 'ipv6'],
];

/** Reachable only when the operator allows private networks (or lists the range). */
const PRIVATE: [string, number, 'ipv4' | 'ipv6'][] = [
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // shared address space (carrier-grade NAT)
  ['198.18.0.0', 15, 'ipv4'], // benchmarking; also where proxies' fake-IP DNS answers point
  ['::1', 128, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64: a translator of the operator's own network
  ['2001:2::', 48, 'ipv6'], // benchmarking
  ['fc00::', 7, 'ipv6'], // unique local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed inside some networks)
];

const CHECKED_URLS_MAX = 1024;

/** A provider host the policy does not allow; answered as a 400 naming the host. */
export class UpstreamHostRefusedError extends Error {}

/** How a policy's refusals name the host and the settings that would allow it. */
export interface HostPolicyWording {
  /** What the host is, e.g. `provider host`. */
  host: string;
  /** The setting the allow-list comes from, named when one of its entries is malformed. */
  allowListSetting: string;
  /** What the operator may set to reach a private address. */
  privateHint: string;
}

const UPSTREAM_WORDING: HostPolicyWording = {
  host: 'provider host',
  allowListSetting: 'UPSTREAM_ALLOWED_NETWORKS',
  privateHint: 'set UPSTREAM_ALLOW_PRIVATE_NETWORKS or UPSTREAM_ALLOWED_NETWORKS to allow it',
};

const typeOf = (ip: string): 'ipv4' | 'ipv6' => (isIP(ip) === 6 ? 'ipv6' : 'ipv4');

function blockList(ranges: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix, type] of ranges) list.addSubnet(network, prefix, type);
  return list;
}

/**
 * Which addresses the gateway may send provider requests to (server-side request
 * forgery: a `custom_host` or a virtual key's host must not reach the cloud metadata
 * service or the operator's internal network). Checked on the resolved addresses, at
 * connection time (undici's connector uses `lookup`), so a name that resolves
 * elsewhere later (DNS rebinding) is caught too; IP literals are checked before.
 *
 * By default: public addresses only. UPSTREAM_ALLOW_PRIVATE_NETWORKS=true admits the
 * private ranges (10/8, 172.16/12, 192.168/16, loopback, CGNAT, fc00::/7), e.g. for a
 * self-hosted vLLM or Ollama; UPSTREAM_ALLOWED_NETWORKS lists CIDRs admitted even so.
 * Link-local and metadata addresses are never reachable.
 *
 * The same rules serve other hosts the gateway connects to (registered MCP servers),
 * with their own allow-list and wording.
 */
export class UpstreamHostPolicy {
  private readonly denied = blockList(ALWAYS_DENIED);
  private readonly privateRanges = blockList(PRIVATE);
  private readonly allowed = new BlockList();
  /**
   * checkUrl's answers by URL: a provider's URL repeats on every request, and parsing it
   * and asking the block lists cost more than the rest of sending it. Bounded (cleared
   * when full) since a URL may carry a model name.
   */
  private readonly checked = new Map<string, string | null>();

  constructor(
    private readonly allowPrivate: boolean,
    allowedNetworks: string[] = [],
    private readonly wording: HostPolicyWording = UPSTREAM_WORDING,
  ) {
    for (const cidr of allowedNetworks) {
      const [network, prefix] = cidr.split('/');
      if (!isIP(network)) throw new Error(`${wording.allowListSetting}: '${cidr}' is not an address or a CIDR`);
      const type = isIP(network) === 6 ? 'ipv6' : 'ipv4';
      this.allowed.addSubnet(network, prefix === undefined ? (type === 'ipv6' ? 128 : 32) : Number(prefix), type);
    }
  }

  /**
   * Why the gateway may not connect to `address`, or null when it may. An IPv6 address that
   * embeds an IPv4 one (mapped, compatible, NAT64, 6to4: see embeddedIpv4) must pass as
   * itself (a local-use NAT64 prefix is private) and as the IPv4 host it reaches.
   */
  refusal(address: string): string | null {
    const ipv4 = embeddedIpv4(address);
    const ips = ipv4 === null ? [address] : [address, ipv4];
    const named = (ip: string) => (ip === address ? ip : `${address} embeds ${ip}, which`);
    for (const ip of ips) if (this.denied.check(ip, typeOf(ip))) return `${named(ip)} is a link-local, metadata or reserved address`;
    for (const ip of ips) {
      if (this.allowed.check(ip, typeOf(ip)) || this.allowPrivate) continue;
      if (this.privateRanges.check(ip, typeOf(ip))) return `${named(ip)} is a private address (${this.wording.privateHint})`;
    }
    return null;
  }

  /** Throws UpstreamHostRefusedError for a URL whose host is an IP literal outside the policy (names are checked on lookup). */
  checkUrl(url: string): void {
    let why = this.checked.get(url);
    if (why === undefined) {
      why = this.urlRefusal(url);
      if (this.checked.size >= CHECKED_URLS_MAX) this.checked.clear();
      this.checked.set(url, why);
    }
    if (why) throw new UpstreamHostRefusedError(why);
  }

  private urlRefusal(url: string): string | null {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (!isIP(host)) return null;
    const why = this.refusal(host);
    return why && `The ${this.wording.host} ${host} is not allowed: ${why}`;
  }

  /**
   * Why `url` may not be reached, its host resolved now (for a host registered once and
   * used later: connections still check on lookup), or null when it may. A host that does
   * not resolve rejects with the resolver's error.
   */
  async resolvedRefusal(url: string): Promise<string | null> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return this.urlRefusal(url);
    const addresses = await dnsLookupAll(host, { all: true });
    const why = addresses.map((entry) => this.refusal(entry.address)).find((refused) => refused !== null);
    return why ? `The ${this.wording.host} ${host} is not allowed: ${why}` : null;
  }

  /** A `lookup` for net/tls connections that resolves as usual, then refuses addresses outside the policy. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.map((entry) => this.refusal(entry.address)).find((why) => why !== null);
      // One bad address refuses the name: a resolver answering with a mix is what rebinding looks like.
      if (refused) return callback(new UpstreamHostRefusedError(`The ${this.wording.host} ${hostname} is not allowed: ${refused}`), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
