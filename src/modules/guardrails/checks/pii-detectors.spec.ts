import { PII_KINDS, PiiKind, findPii, redactPii } from './pii-detectors';

const ALL = new Set<PiiKind>(PII_KINDS);
/** The kinds found in `text`, with the text each covers. */
const found = (text: string, kinds: ReadonlySet<PiiKind> = ALL) => findPii(text, kinds).map((f) => [f.kind, text.slice(f.start, f.end)]);

describe('findPii', () => {
  it.each([
    ['write to ada@example.com.', 'ada@example.com'],
    ['<first.last+tag@mail.example.co.uk>', 'first.last+tag@mail.example.co.uk'],
    ['ADA_99@Example.ORG', 'ADA_99@Example.ORG'],
  ])('finds the email in %j', (text, email) => {
    expect(found(text)).toEqual([['email', email]]);
  });

  it.each(['user@localhost', '@example.com', 'a@b.c', 'name@'])('finds no email in %j', (text) => {
    expect(found(text)).toEqual([]);
  });

  it.each([
    ['call +1 (555) 123-4567 now', '+1 (555) 123-4567'],
    ['555-123-4567', '555-123-4567'],
    ['(555) 123-4567', '(555) 123-4567'],
    ['555.123.4567', '555.123.4567'],
    ['tel: +44 20 7946 0958', '+44 20 7946 0958'],
    ['+4915112345678', '+4915112345678'],
    ['+49 30 123456', '+49 30 123456'],
  ])('finds the phone number in %j', (text, phone) => {
    expect(found(text)).toEqual([['phone', phone]]);
  });

  it.each(['on 2024-01-15 10:30', 'order 1700000000', 'id ORD-555-123-4567', '12-34-56', '(555 123-4567'])('finds no phone number in %j', (text) => {
    expect(found(text)).toEqual([]);
  });

  it.each([
    ['4111 1111 1111 1111', '4111 1111 1111 1111'],
    ['card: 4111-1111-1111-1111.', '4111-1111-1111-1111'],
    ['4111111111111111', '4111111111111111'],
    ['amex 378282246310005', '378282246310005'],
    ['6011 0009 9013 9424', '6011 0009 9013 9424'],
  ])('finds the card number in %j', (text, card) => {
    expect(found(text)).toEqual([['card', card]]);
  });

  it.each(['4111 1111 1111 1112', '41111111111111110000', '1234 5678 9012'])('finds no card number in %j (checksum, length)', (text) => {
    expect(found(text).filter(([kind]) => kind === 'card')).toEqual([]);
  });

  it.each([
    ['from 192.168.0.1:8080', '192.168.0.1'],
    ['8.8.8.8.', '8.8.8.8'],
    ['255.255.255.255', '255.255.255.255'],
  ])('finds the IPv4 address in %j', (text, ip) => {
    expect(found(text)).toEqual([['ipv4', ip]]);
  });

  it.each(['256.1.1.1', 'version 1.2.3.4.5', '1.2.3'])('finds no IPv4 address in %j', (text) => {
    expect(found(text)).toEqual([]);
  });

  it.each([
    ['ssn 123-45-6789', '123-45-6789'],
    ['123 45 6789', '123 45 6789'],
  ])('finds the SSN in %j', (text, ssn) => {
    expect(found(text)).toEqual([['ssn', ssn]]);
  });

  it.each(['000-12-3456', '666-12-3456', '900-12-3456', '123-00-4567', '123-45-0000', '123456789', '123-45 6789', '1123-45-6789'])(
    'finds no SSN in %j',
    (text) => {
      expect(found(text).filter(([kind]) => kind === 'ssn')).toEqual([]);
    },
  );

  it('reports a span as one kind only, even when only another kind is asked for', () => {
    expect(found('192.168.100.200', new Set(['phone']))).toEqual([]);
    expect(found('4111 1111 1111 1111', new Set(['phone']))).toEqual([]);
    expect(found('ada.5551234567@example.com', new Set(['phone']))).toEqual([]);
  });

  it('finds several kinds in text order', () => {
    const text = 'ip 10.0.0.1, mail bob@example.com, card 4111111111111111, ssn 123-45-6789, phone 555-123-4567';
    expect(found(text).map(([kind]) => kind)).toEqual(['ipv4', 'email', 'card', 'ssn', 'phone']);
  });

  it.each([
    ['a long run of local-part characters', 'a'.repeat(200_000) + '@'],
    ['a long dotted domain', 'a@' + 'b.'.repeat(100_000)],
    ['spaced digits', '1 '.repeat(100_000) + 'x'],
    ['dotted digits', '1.'.repeat(100_000)],
    ['digits and letters', '1234567890123x'.repeat(15_000)],
  ])('stays linear on %s', (_, text) => {
    const started = Date.now();
    findPii(text, ALL);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('redactPii', () => {
  it('replaces each finding with its placeholder and keeps the rest', () => {
    const text = 'mail bob@example.com or call 555-123-4567.';
    expect(redactPii(text, findPii(text, ALL))).toBe('mail [REDACTED_EMAIL] or call [REDACTED_PHONE].');
  });

  it('leaves a text without findings as it is', () => {
    expect(redactPii('nothing here', [])).toBe('nothing here');
  });
});
