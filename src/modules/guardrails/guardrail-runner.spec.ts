import { PostJson } from './guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck, Guardrail } from '../../context/guardrail-records';
import { buildGuardrails } from './guardrail-registry';
import { runGuardrails } from './guardrail-runner';

const input = (...texts: string[]): CheckInput => ({ stage: 'input', texts, model: 'gpt-4o', metadata: { team: 'a' } });
const answering = (status: number, json: unknown): PostJson => jest.fn().mockResolvedValue({ status, json });

describe('runGuardrails', () => {
  it('passes when every check passes', async () => {
    const guardrails = buildGuardrails([
      {
        name: 'g',
        deny: true,
        checks: [
          { type: 'regex', pattern: 'hello' },
          { type: 'models', allow: ['gpt-4o'] },
        ],
      },
    ]);
    expect(await runGuardrails(guardrails, input('hello'))).toEqual({
      results: [
        {
          name: 'g',
          deny: true,
          verdict: true,
          checks: [
            { type: 'regex', verdict: true, reason: 'text matches /hello/' },
            { type: 'models', verdict: true, reason: "model 'gpt-4o' is allowed" },
          ],
        },
      ],
      denied: false,
      failed: false,
    });
  });

  it('a failing guardrail with deny: true denies', async () => {
    const guardrails = buildGuardrails([
      {
        name: 'no-secrets',
        deny: true,
        checks: [
          { type: 'regex', pattern: 'sk-[A-Za-z0-9]+', must: 'not_match' },
          { type: 'contains', words: ['forbidden'], operator: 'none' },
        ],
      },
    ]);
    const outcome = await runGuardrails(guardrails, input('here is sk-abc', 'all fine'));
    expect(outcome.denied).toBe(true);
    expect(outcome.failed).toBe(true);
    expect(outcome.results[0]).toEqual({
      name: 'no-secrets',
      deny: true,
      verdict: false,
      checks: [
        { type: 'regex', verdict: false, reason: 'text matches /sk-[A-Za-z0-9]+/' },
        { type: 'contains', verdict: true, reason: 'none of the words found' },
      ],
    });
  });

  it('a failing guardrail with deny: false only marks the outcome failed', async () => {
    const guardrails = buildGuardrails([
      { name: 'soft', checks: [{ type: 'word_count', max: 1 }] },
      { name: 'hard', deny: true, checks: [{ type: 'word_count', max: 10 }] },
    ]);
    const outcome = await runGuardrails(guardrails, input('two words'));
    expect(outcome).toMatchObject({ denied: false, failed: true });
    expect(outcome.results.map((r) => [r.name, r.verdict])).toEqual([
      ['soft', false],
      ['hard', true],
    ]);
  });

  it('runs every check even after one failed', async () => {
    const guardrails = buildGuardrails([
      { deny: true, checks: [{ type: 'char_count', max: 1 }, { type: 'json' }] },
      { deny: true, checks: [{ type: 'word_count', max: 1 }] },
    ]);
    const outcome = await runGuardrails(guardrails, input('not json'));
    expect(outcome.results.flatMap((r) => r.checks.map((c) => c.verdict))).toEqual([false, false, false]);
  });

  it('runs all checks concurrently, across guardrails too', async () => {
    let waiting = 0;
    let most = 0;
    const slow: GuardrailCheck = {
      type: 'slow',
      run: async (): Promise<CheckResult> => {
        most = Math.max(most, ++waiting);
        await new Promise((resolve) => setTimeout(resolve, 10));
        waiting--;
        return { type: 'slow', verdict: true, reason: 'ok' };
      },
    };
    await runGuardrails(
      [
        { name: 'a', deny: false, checks: [slow, slow] },
        { name: 'b', deny: false, checks: [slow] },
      ],
      input('x'),
    );
    expect(most).toBe(3);
  });

  it('turns a check that throws into a failed check', async () => {
    const broken: GuardrailCheck = {
      type: 'broken',
      run: () => {
        throw new Error('bug');
      },
    };
    const guardrails: Guardrail[] = [{ name: 'g', deny: true, checks: [broken] }];
    expect(await runGuardrails(guardrails, input('x'))).toMatchObject({
      denied: true,
      results: [{ verdict: false, checks: [{ type: 'broken', verdict: false, reason: 'check failed: bug' }] }],
    });
  });

  describe('redaction', () => {
    it('returns the texts of a redacting pii check, one per piece', async () => {
      const guardrails = buildGuardrails([{ checks: [{ type: 'pii', kinds: ['email'], action: 'redact' }] }]);
      const outcome = await runGuardrails(guardrails, input('a@example.com', 'none'));
      expect(outcome).toMatchObject({ failed: false, denied: false, redactedTexts: ['[REDACTED_EMAIL]', 'none'] });
    });

    it('merges the redactions of two pii checks, in one guardrail or in two', async () => {
      const texts = ['mail a@example.com, card 4111 1111 1111 1111', 'call 555-123-4567'];
      const expected = ['mail [REDACTED_EMAIL], card [REDACTED_CARD]', 'call [REDACTED_PHONE]'];
      const email = { type: 'pii', kinds: ['email'], action: 'redact' };
      const cardAndPhone = { type: 'pii', kinds: ['card', 'phone'], action: 'redact' };
      const oneGuardrail = buildGuardrails([{ checks: [email, cardAndPhone] }]);
      const twoGuardrails = buildGuardrails([{ checks: [cardAndPhone] }, { checks: [{ type: 'json' }] }, { checks: [email] }]);
      expect((await runGuardrails(oneGuardrail, input(...texts))).redactedTexts).toEqual(expected);
      expect((await runGuardrails(twoGuardrails, input(...texts))).redactedTexts).toEqual(expected);
    });

    it('has no redacted texts when nothing was redacted, and a denying pii check never redacts', async () => {
      const guardrails = buildGuardrails([
        {
          checks: [
            { type: 'pii', action: 'redact' },
            { type: 'pii', kinds: ['email'] },
          ],
        },
      ]);
      expect(await runGuardrails(guardrails, input('clean text'))).not.toHaveProperty('redactedTexts');
      const outcome = await runGuardrails(guardrails, input('a@example.com'));
      expect(outcome.redactedTexts).toEqual(['[REDACTED_EMAIL]']);
      expect(outcome.results[0].checks.map((c) => c.verdict)).toEqual([true, false]);
    });
  });

  describe('webhook checks', () => {
    const webhookGuardrail = (postJson: PostJson) =>
      buildGuardrails([{ name: 'hook', deny: true, checks: [{ type: 'webhook', url: 'https://hooks.example.com/g', timeout_ms: 20 }] }], { postJson });

    it('a hook answering true passes, and receives stage, model, texts and metadata', async () => {
      const postJson = answering(200, { verdict: true, reason: 'fine' });
      const outcome = await runGuardrails(webhookGuardrail(postJson), input('hi'));
      expect(outcome).toMatchObject({ denied: false, failed: false, results: [{ checks: [{ type: 'webhook', verdict: true, reason: 'fine' }] }] });
      expect(postJson).toHaveBeenCalledWith('https://hooks.example.com/g', {}, { stage: 'input', model: 'gpt-4o', texts: ['hi'], metadata: { team: 'a' } }, 20);
    });

    it('a hook answering false denies with its reason', async () => {
      const outcome = await runGuardrails(webhookGuardrail(answering(200, { verdict: false, reason: 'off topic' })), input('hi'));
      expect(outcome).toMatchObject({ denied: true, results: [{ checks: [{ verdict: false, reason: 'off topic' }] }] });
    });

    it.each<[string, PostJson, string]>([
      ['a hook that never answers', () => new Promise(() => undefined), 'webhook did not answer within 20 ms'],
      ['a postJson that throws', () => Promise.reject(new Error('upstream host not allowed')), 'webhook call failed: upstream host not allowed'],
      ['a non-2xx answer', answering(500, { verdict: true }), 'webhook answered HTTP 500'],
      ['a bad answer', answering(200, { ok: true }), 'webhook answer is not {"verdict": true|false, "reason": "..."}'],
    ])('%s denies, saying why', async (_, postJson, reason) => {
      const outcome = await runGuardrails(webhookGuardrail(postJson), input('hi'));
      expect(outcome).toMatchObject({ denied: true, failed: true, results: [{ verdict: false, checks: [{ type: 'webhook', verdict: false, reason }] }] });
    });
  });
});
