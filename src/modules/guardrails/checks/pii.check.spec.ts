import { CheckInput } from '../../../context/guardrail-records';
import { PiiCheck } from './pii.check';

const input = (...texts: string[]): CheckInput => ({ stage: 'input', texts, model: 'gpt-4o', metadata: {} });
const build = (params: Record<string, unknown>) => {
  const { check, problems } = PiiCheck.parse(params, 'c');
  if (!check) throw new Error(problems.join('; '));
  return check as PiiCheck;
};

describe('PiiCheck', () => {
  describe('action deny (the default)', () => {
    it('fails when data of a listed kind is found, giving counts and never the data', () => {
      const result = build({ kinds: ['email', 'card'] }).run(input('mail a@example.com or b@example.com', 'card 4111 1111 1111 1111'));
      expect(result).toEqual({ type: 'pii', verdict: false, reason: 'found 2 email, 1 card' });
    });

    it('passes when only kinds it was not asked about occur', () => {
      expect(build({ kinds: ['ssn'] }).run(input('mail a@example.com'))).toEqual({ type: 'pii', verdict: true, reason: 'no PII found' });
    });

    it('looks for every kind when kinds is absent', () => {
      expect(build({}).run(input('from 10.0.0.1')).reason).toBe('found 1 ipv4');
    });
  });

  describe('action redact', () => {
    const check = build({ kinds: ['email', 'phone', 'card', 'ipv4', 'ssn'], action: 'redact' });

    it('passes and returns one redacted text per piece', () => {
      const result = check.run(input('I am a@example.com', 'no PII here', 'call +1 555-123-4567 from 10.0.0.1, ssn 123-45-6789'));
      expect(result).toEqual({
        type: 'pii',
        verdict: true,
        reason: 'redacted 1 email, 1 phone, 1 ipv4, 1 ssn',
        redactedTexts: ['I am [REDACTED_EMAIL]', 'no PII here', 'call [REDACTED_PHONE] from [REDACTED_IPV4], ssn [REDACTED_SSN]'],
      });
    });

    it('replaces a card number, separators and all', () => {
      expect(check.run(input('pay with 4111-1111-1111-1111 today')).redactedTexts).toEqual(['pay with [REDACTED_CARD] today']);
    });

    it('returns no texts when there was nothing to redact', () => {
      expect(check.run(input('hello', 'world'))).toEqual({ type: 'pii', verdict: true, reason: 'no PII found' });
    });

    it('redacts only the kinds it was asked for', () => {
      expect(build({ kinds: ['email'], action: 'redact' }).run(input('a@example.com 555-123-4567')).redactedTexts).toEqual(['[REDACTED_EMAIL] 555-123-4567']);
    });
  });

  it.each([
    [{ kinds: [] }, ['c.kinds must be a non-empty array']],
    [{ kinds: 'email' }, ['c.kinds must be a non-empty array']],
    [
      { kinds: ['email', 'iban', null] },
      ['c.kinds[1] must be one of email, phone, card, ipv4, ssn', 'c.kinds[2] must be one of email, phone, card, ipv4, ssn'],
    ],
    [{ action: 'mask' }, ['c.action must be one of deny, redact']],
    [{ kinds: ['email'], types: [] }, ['c.types is not a known field']],
  ])('refuses %j', (params, problems) => {
    expect(PiiCheck.parse(params, 'c')).toEqual({ problems });
  });
});
