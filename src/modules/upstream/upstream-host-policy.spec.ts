import { UpstreamHostPolicy, UpstreamHostRefusedError } from './upstream-host-policy';

const lookup = (policy: UpstreamHostPolicy, host: string) =>
  new Promise<string>((resolve, reject) =>
    policy.lookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(JSON.stringify(addresses)))),
  );

describe('UpstreamHostPolicy', () => {
  const strict = new UpstreamHostPolicy(false);
  const permissive = new UpstreamHostPolicy(true);

  it('never allows link-local, metadata, unspecified or multicast addresses, however written', () => {
    for (const address of ['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', 'fd00:ec2::254', '100.100.100.200', '0.0.0.0', '224.0.0.1', '::']) {
      expect([address, strict.refusal(address)]).toEqual([address, expect.stringMatching(/link-local, metadata or reserved/)]);
      expect(permissive.refusal(address)).not.toBeNull();
    }
  });

  it('allows private ranges only when the operator does, or lists them', () => {
    for (const address of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '127.0.0.1', '::1', 'fd12::1', '100.64.0.1']) {
      expect([address, strict.refusal(address)]).toEqual([address, expect.stringMatching(/private address/)]);
      expect(permissive.refusal(address)).toBeNull();
    }
    const listed = new UpstreamHostPolicy(false, ['10.0.3.0/24', '127.0.0.1']);
    expect(listed.refusal('10.0.3.7')).toBeNull();
    expect(listed.refusal('127.0.0.1')).toBeNull();
    expect(listed.refusal('10.0.4.1')).toMatch(/private/);
    expect(listed.refusal('169.254.169.254')).toMatch(/metadata/);
  });

  it('allows public addresses', () => {
    expect(strict.refusal('8.8.8.8')).toBeNull();
    expect(strict.refusal('2606:4700::1111')).toBeNull();
  });

  it('judges an IPv6 address that embeds an IPv4 one by the IPv4 host it reaches', () => {
    const metadata = [
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::169.254.169.254',
      '64:ff9b:1::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
      '::a9fe:a9fe',
      '::169.254.169.254',
      '::ffff:a9fe:a9fe',
      '0:0:0:0:0:ffff:a9fe:a9fe',
    ];
    for (const address of metadata) {
      expect([address, strict.refusal(address)]).toEqual([address, expect.stringMatching(/link-local, metadata or reserved/)]);
      expect([address, permissive.refusal(address)]).toEqual([address, expect.stringMatching(/link-local, metadata or reserved/)]);
    }
    const loopback = ['::7f00:1', '::127.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::1', '2002:a00:1::', '64:ff9b::10.0.0.1'];
    for (const address of loopback) {
      expect([address, strict.refusal(address)]).toEqual([address, expect.stringMatching(/private address/)]);
      expect([address, permissive.refusal(address)]).toEqual([address, null]);
    }
    // A translator to a public host is how IPv6-only networks reach IPv4 providers.
    for (const address of ['64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8']) expect([address, strict.refusal(address)]).toEqual([address, null]);
    // The local-use NAT64 prefix is the operator's own network, whatever it embeds.
    expect(strict.refusal('64:ff9b:1::808:808')).toMatch(/private address/);
  });

  it('refuses the special-purpose ranges: documentation, reserved, broadcast, discard, Teredo, ORCHID', () => {
    const denied = [
      '0.1.2.3',
      '192.0.0.8',
      '192.0.2.10',
      '192.88.99.1',
      '198.51.100.7',
      '203.0.113.200',
      '240.0.0.1',
      '255.255.255.255',
      '239.1.1.1',
      '::',
      '100::1',
      '2001::1',
      '2001:10::1',
      '2001:20::1',
      '2001:db8::1',
      '3fff::1',
      '5f00::1',
      'ff02::1',
      'fe80::1%eth0',
    ];
    for (const address of denied) {
      expect([address, strict.refusal(address)]).toEqual([address, expect.stringMatching(/link-local, metadata or reserved/)]);
      expect([address, permissive.refusal(address)]).not.toEqual([address, null]);
    }
    for (const address of ['198.18.0.1', '198.19.255.254', 'fec0::1', 'feff::1', '2001:2::1', 'fd00::1', '100.127.255.254']) {
      expect([address, strict.refusal(address)]).toEqual([address, expect.stringMatching(/private address/)]);
      expect(permissive.refusal(address)).toBeNull();
    }
  });

  it('checks IP literals in URLs before connecting, and names on lookup', async () => {
    expect(() => strict.checkUrl('http://169.254.169.254/latest/meta-data')).toThrow(UpstreamHostRefusedError);
    expect(() => strict.checkUrl('http://[::1]:8080/v1')).toThrow(/private/);
    // URL parsers rewrite these forms (`[::127.0.0.1]` becomes `[::7f00:1]`): the check sees what is connected to.
    expect(() => strict.checkUrl('http://[::127.0.0.1]/v1')).toThrow(/private/);
    expect(() => strict.checkUrl('http://[64:ff9b::169.254.169.254]/latest')).toThrow(/reserved/);
    expect(() => strict.checkUrl('http://[2002:a9fe:a9fe::1]/latest')).toThrow(/reserved/);
    expect(() => strict.checkUrl('http://198.18.0.1/v1')).toThrow(/private/);
    expect(() => strict.checkUrl('http://[fec0::1]/v1')).toThrow(/private/);
    expect(() => strict.checkUrl('https://api.openai.com/v1')).not.toThrow();
    await expect(lookup(strict, 'localhost')).rejects.toThrow(/localhost is not allowed: .* private address/);
    await expect(lookup(permissive, 'localhost')).resolves.toMatch(/127\.0\.0\.1|::1/);
  });

  it('answers a URL checked before as the first time (the answers are remembered)', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => strict.checkUrl('http://10.0.0.7/v1/chat/completions')).toThrow('The provider host 10.0.0.7 is not allowed: 10.0.0.7 is a private address');
      expect(() => strict.checkUrl('http://8.8.8.8/v1/chat/completions')).not.toThrow();
      expect(() => strict.checkUrl('not a url')).toThrow('Invalid URL');
    }
  });

  it('refuses a malformed allow-list at start', () => {
    expect(() => new UpstreamHostPolicy(false, ['10.0.0/8'])).toThrow(/not an address or a CIDR/);
  });
});
