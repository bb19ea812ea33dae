import { embeddedIpv4, ipv6Words } from './embedded-ipv4';

describe('embeddedIpv4', () => {
  it.each([
    ['::7f00:1', '127.0.0.1'],
    ['::127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:7F00:1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', '169.254.169.254'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['64:ff9b::169.254.169.254', '169.254.169.254'],
    ['64:ff9b:1::a9fe:a9fe', '169.254.169.254'],
    ['2002:a9fe:a9fe::1', '169.254.169.254'],
    ['2002:0a00:0001:ffff::', '10.0.0.1'],
    ['::2', '0.0.0.2'],
  ])('%s embeds %s', (address, ipv4) => expect(embeddedIpv4(address)).toBe(ipv4));

  it.each(['::', '::1', '2606:4700::1111', 'fe80::1%eth0', '64:ff9b:2::1', '169.254.169.254', 'localhost', '::ffff:1:a9fe:a9fe'])(
    '%s embeds none',
    (address) => {
      expect(embeddedIpv4(address)).toBeNull();
    },
  );

  it('reads the eight words of any written form', () => {
    expect(ipv6Words('1:2:3:4:5:6:1.2.3.4')).toEqual([1, 2, 3, 4, 5, 6, 0x102, 0x304]);
    expect(ipv6Words('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Words('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Words('::1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0x102, 0x304]);
    expect(ipv6Words('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(ipv6Words('not an address')).toBeNull();
  });
});
