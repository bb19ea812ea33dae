/**
 * `GET /v1/analytics/users` and `/v1/analytics/users/{user}` (issue 36 item 5): the end users
 * who made requests in a period with their requests, errors, cost (unknown apart, never $0),
 * first and last request and budget record, prefix search and paging, per role. Every figure
 * is checked against the same sums computed straight from the log rows, over a long range
 * (rollups, some rows compacted, some still queued, partial edge days) and a short one.
 */
import { call, createApiKey } from '../support/e2e-helpers';
import { startTestGateway, TestGateway } from '../support/test-gateway';

// Eight and a half days: partial first and last days, a whole week and whole days between.
const FROM = '2024-03-01T06:30:00.000Z';
const TO = '2024-03-09T18:45:00.000Z';
const DEFAULT_WORKSPACE = '00000000-0000-4000-8000-000000000001';
const USERS = ['user-0', 'user-1', 'user-2', 'User-3', 'a%b', 'a_c', 'abc', 'o\'hara"; drop table request_logs; --'];

interface Row {
  user: string;
  requests: number;
  errors: number;
  cost_usd: number | null;
  unpriced_requests: number;
  first_seen: string | null;
  last_seen: string | null;
  budget?: { id: string; budget_limit_usd: number | null; budget_period: string | null } | null;
}

describe('end users who made requests', () => {
  let gateway: TestGateway;
  let member: { id: string; key: string };
  let viewer: { id: string; key: string };
  let betaAdmin: { id: string; key: string };
  let betaId: string;
  const budgets: Record<string, string> = {};

  /** `count` rows from `start`, one every `stepSeconds`: several users, keys, workspaces; errors, priced and unpriced rows. */
  const seed = (start: string, count: number, stepSeconds: number, firstIndex: number) =>
    gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens,
                                 api_key_id, workspace_id, model, provider, end_user)
       select gen_random_uuid(), 'seeded', $1::timestamptz + (i - $4) * make_interval(secs => $3), 'chat.completions',
              case when i % 13 = 0 then 500 else 200 end, 40 + i % 900,
              -- 'abc' has no price at all; others now and then.
              case when i % 9 = 6 or i % 6 = 5 then null else ((i % 5) + 1) * 0.0007 + (i % 7) * 0.00001 end,
              10 + i % 50, i % 20,
              case when i % 4 = 0 then $5::uuid when i % 10 = 1 then $6::uuid end,
              case when i % 4 <> 0 and i % 10 = 1 then $7::uuid else $8::uuid end,
              'gpt-4o-mini', 'openai',
              case when i % 11 = 0 then null else ($9::text[])[1 + i % 9] end
       from generate_series($4::int, $4::int + $2::int - 1) as i`,
      [start, count, stepSeconds, firstIndex, member.id, betaAdmin.id, betaId, DEFAULT_WORKSPACE, USERS],
    );

  beforeAll(async () => {
    gateway = await startTestGateway({ ROLLUP_COMPACT_INTERVAL_MS: '600000' });
    member = await createApiKey(gateway, { role: 'member' });
    viewer = await createApiKey(gateway, { role: 'viewer' });
    const beta = await call(gateway, '/v1/workspaces', { body: { name: 'Team beta', slug: 'beta' } });
    expect(beta.status).toBe(201);
    betaId = beta.body.id;
    const made = await call(gateway, '/v1/api-keys', { body: { name: 'beta admin', role: 'admin', workspace: 'beta' } });
    expect(made.status).toBe(201);
    betaAdmin = made.body;
    // USERS has 8 names; index 9 of the array is null: rows without a user (and i % 11 = 0).
    // A day before FROM to a day after TO, one row every 17 minutes; compacted, then more rows left queued.
    await seed('2024-02-29T00:00:00Z', 960, 17 * 60, 1);
    await gateway.dataSource.query('select request_log_rollups_compact(100000)');
    await seed('2024-02-29T00:05:00Z', 240, 61 * 60, 5000);
    const [{ n }] = await gateway.dataSource.query('select count(*)::int as n from request_log_rollup_queue');
    expect(n).toBe(240);
    // Budget records: one for a user with requests, one for a user who made none.
    for (const user of ['user-1', 'budget-only']) {
      const created = await call(gateway, '/v1/end-users', { body: { user, budget_limit_usd: 5, budget_period: 'monthly' } });
      expect(created.status).toBe(201);
      budgets[user] = created.body.id;
    }
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const get = async (path: string, apiKey?: string) => {
    const response = await call(gateway, path, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  };

  /** The truth from the log rows: per end user, in [from, to), under `where`. */
  async function truth(where: string, params: unknown[], range = { from: FROM, to: TO }): Promise<Row[]> {
    const rows = await gateway.dataSource.query(
      `select end_user as user, count(*)::int as requests,
              (count(*) filter (where status_code >= 400 or error is not null))::int as errors,
              case when count(cost_usd) = 0 then null else sum(cost_usd)::float8 end as cost_usd,
              (count(*) filter (where cost_usd is null and (prompt_tokens is not null or completion_tokens is not null)))::int as unpriced_requests,
              min(created_at) as first_seen, max(created_at) as last_seen
       from request_logs log
       where created_at >= $1 and created_at < $2 and end_user is not null and ${where}
       group by end_user
       order by coalesce(sum(cost_usd), 0) desc, count(*) desc, end_user`,
      [range.from, range.to, ...params],
    );
    return rows.map((row: Row & { first_seen: Date; last_seen: Date }) => ({
      ...row,
      first_seen: row.first_seen.toISOString(),
      last_seen: row.last_seen.toISOString(),
    }));
  }

  /** The rows shown against the truth, figure by figure (cost to the last digit a float keeps). */
  function expectRows(shown: Row[], expected: Row[]) {
    expect(shown.map((row) => row.user)).toEqual(expected.map((row) => row.user));
    shown.forEach((row, i) => {
      const want = expected[i];
      expect({ ...row, cost_usd: undefined, budget: undefined }).toEqual({ ...want, cost_usd: undefined, budget: undefined });
      if (want.cost_usd === null) expect(row.cost_usd).toBeNull();
      else expect(row.cost_usd).toBeCloseTo(want.cost_usd, 10);
    });
  }

  const withBudgets = (rows: Row[]): Row[] => [
    ...rows.map((row) => ({ ...row, budget: budgets[row.user] ? expect.objectContaining({ id: budgets[row.user] }) : null })),
    { user: 'budget-only', requests: 0, errors: 0, cost_usd: 0, unpriced_requests: 0, first_seen: null, last_seen: null },
  ];

  it('lists every end user of the period with their requests, errors, cost, unpriced requests, first and last request', async () => {
    const body = await get(`/v1/analytics/users?from=${FROM}&to=${TO}`);
    const expected = withBudgets(await truth('true', []));
    expect(body).toMatchObject({ object: 'list', from: FROM, to: TO, total: expected.length, next_cursor: null });
    expectRows(body.data, expected);
    // The budget records are named, the one without requests listed last with zeros.
    expect(body.data.find((row: Row) => row.user === 'user-1').budget).toMatchObject({ id: budgets['user-1'], budget_limit_usd: 5, budget_period: 'monthly' });
    expect(body.data.find((row: Row) => row.user === 'user-0').budget).toBeNull();
    expect(body.data.at(-1)).toMatchObject({ user: 'budget-only', requests: 0, cost_usd: 0, first_seen: null, budget: { id: budgets['budget-only'] } });
    // A user whose requests have no price at all: unknown spend, not $0.
    const abc = body.data.find((row: Row) => row.user === 'abc');
    expect(abc.cost_usd).toBeNull();
    expect(abc.unpriced_requests).toBe(abc.requests);
    expect(abc.unpriced_requests).toBeGreaterThan(0);
    // A user with some of each: the priced sum and the count of the others.
    const mixed = body.data.find((row: Row) => row.user === 'user-2');
    expect(mixed.cost_usd).toBeGreaterThan(0);
    expect(mixed.unpriced_requests).toBeGreaterThan(0);
  });

  it('holds over a short range (log rows and queued rows only) and orders by requests or by name', async () => {
    const range = { from: '2024-03-04T10:00:00.000Z', to: '2024-03-04T19:30:00.000Z' };
    const body = await get(`/v1/analytics/users?from=${range.from}&to=${range.to}&order=requests`);
    const expected = (await truth('true', [], range)).sort(
      (a, b) => b.requests - a.requests || (b.cost_usd ?? 0) - (a.cost_usd ?? 0) || (a.user < b.user ? -1 : 1),
    );
    expectRows(body.data.slice(0, -1), expected);
    const byName = await get(`/v1/analytics/users?from=${range.from}&to=${range.to}&order=user`);
    // In the database's collation, as the server sorts.
    const names = await gateway.dataSource.query('select name from unnest($1::text[]) as name order by name', [
      [...expected.map((row) => row.user), 'budget-only'],
    ]);
    expect(byName.data.map((row: Row) => row.user)).toEqual(names.map((row: { name: string }) => row.name));
  });

  it('finds users by the beginning of their name, case-insensitively, wildcards taken literally', async () => {
    const prefixed = await get(`/v1/analytics/users?from=${FROM}&to=${TO}&q=user-`);
    expectRows(
      prefixed.data,
      (await truth(`lower(end_user) like 'user-%'`, [])).map((row) => ({ ...row, budget: budgets[row.user] ? expect.anything() : null })),
    );
    expect(prefixed.data.map((row: Row) => row.user)).toContain('User-3');
    const percent = await get(`/v1/analytics/users?from=${FROM}&to=${TO}&q=${encodeURIComponent('a%')}`);
    expect(percent.data.map((row: Row) => row.user)).toEqual(['a%b']);
    const underscore = await get(`/v1/analytics/users?from=${FROM}&to=${TO}&q=a_`);
    expect(underscore.data.map((row: Row) => row.user)).toEqual(['a_c']);
    const quoted = await get(`/v1/analytics/users?from=${FROM}&to=${TO}&q=${encodeURIComponent('o\'hara"; drop')}`);
    expect(quoted.data.map((row: Row) => row.user)).toEqual([USERS[7]]);
    const budgetOnly = await get(`/v1/analytics/users?from=${FROM}&to=${TO}&q=budget`);
    expect(budgetOnly.data.map((row: Row) => row.user)).toEqual(['budget-only']);
    expect((await get(`/v1/analytics/users?from=${FROM}&to=${TO}&q=nobody`)).data).toEqual([]);
  });

  it('pages with next_cursor through the same list', async () => {
    const whole = await get(`/v1/analytics/users?from=${FROM}&to=${TO}`);
    const seen: Row[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { data: Row[]; next_cursor: string | null; total: number } = await get(
        `/v1/analytics/users?from=${FROM}&to=${TO}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.data.length).toBeLessThanOrEqual(3);
      expect(page.total).toBe(whole.total);
      seen.push(...page.data);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(whole.total / 3));
    expect(seen).toEqual(whole.data);
  });

  it("answers one user's figures, zeros for a user without requests", async () => {
    const [expected] = await truth('end_user = $3', [USERS[7]]);
    const body = await get(`/v1/analytics/users/${encodeURIComponent(USERS[7])}?from=${FROM}&to=${TO}`);
    const { object, from, to, ...row } = body;
    expect({ object, from, to, budget: row.budget }).toEqual({ object: 'analytics.end_user', from: FROM, to: TO, budget: null });
    expectRows([row], [expected]);
    const budgeted = await get(`/v1/analytics/users/user-1?from=${FROM}&to=${TO}`);
    expect(budgeted.budget).toMatchObject({ id: budgets['user-1'] });
    expectRows([{ ...budgeted, object: undefined, from: undefined, to: undefined }], await truth(`end_user = 'user-1'`, []));
    const unpriced = await get(`/v1/analytics/users/abc?from=${FROM}&to=${TO}`);
    expect(unpriced.cost_usd).toBeNull();
    expect(await get(`/v1/analytics/users/nobody?from=${FROM}&to=${TO}`)).toMatchObject({
      user: 'nobody',
      requests: 0,
      cost_usd: 0,
      first_seen: null,
      last_seen: null,
      budget: null,
    });
  });

  it("narrows to one API key's end users (budget-only users left out)", async () => {
    const body = await get(`/v1/analytics/users?from=${FROM}&to=${TO}&api_key_id=${member.id}`);
    expectRows(
      body.data,
      (await truth('api_key_id = $3', [member.id])).map((row) => ({ ...row, budget: budgets[row.user] ? expect.anything() : null })),
    );
    expect(body.data.map((row: Row) => row.user)).not.toContain('budget-only');
    const one = await get(`/v1/analytics/users/user-2?from=${FROM}&to=${TO}&api_key_id=${member.id}`);
    expectRows([{ ...one, object: undefined, from: undefined, to: undefined }], await truth(`api_key_id = $3 and end_user = 'user-2'`, [member.id]));
  });

  it('reads the workspace for admins and viewers, a member its own requests; budgets only for roles that read end users', async () => {
    const beta = await get(`/v1/analytics/users?from=${FROM}&to=${TO}`, betaAdmin.key);
    expectRows(
      beta.data,
      (await truth('workspace_id = $3', [betaId])).map((row) => ({ ...row, budget: null })),
    );
    expect(beta.data.every((row: Row) => row.budget === null)).toBe(true);

    const viewed = await get(`/v1/analytics/users?from=${FROM}&to=${TO}`, viewer.key);
    expectRows(viewed.data, await truth('workspace_id = $3', [DEFAULT_WORKSPACE]));
    expect(viewed.data.some((row: Row) => 'budget' in row)).toBe(false);

    const own = await get(`/v1/analytics/users?from=${FROM}&to=${TO}`, member.key);
    expectRows(own.data, await truth('api_key_id = $3', [member.id]));
    expect(own.data.some((row: Row) => 'budget' in row)).toBe(false);
    // Another key's requests are not the member's, by name either.
    const other = await get(`/v1/analytics/users/user-1?from=${FROM}&to=${TO}`, member.key);
    expectRows([{ ...other, object: undefined, from: undefined, to: undefined }], await truth(`api_key_id = $3 and end_user = 'user-1'`, [member.id]));

    const anonymous = await call(gateway, '/v1/analytics/users', { apiKey: null });
    expect(anonymous.status).toBe(401);
  });

  it.each([
    ['from=yesterday', 'from=yesterday', 'from'],
    ['from after to', `from=${TO}&to=${FROM}`, 'from'],
    ['limit=0', 'limit=0', 'limit'],
    ['limit=501', 'limit=501', 'limit'],
    ['limit=ten', 'limit=ten', 'limit'],
    ['cursor=abc', 'cursor=abc', 'cursor'],
    ['cursor=-1', 'cursor=-1', 'cursor'],
    ['order=spend', 'order=spend', 'order'],
    ['api_key_id=not-a-uuid', 'api_key_id=not-a-uuid', 'api_key_id'],
    ['q of 513 characters', `q=${'x'.repeat(513)}`, 'q'],
  ])('answers 400 naming the field for %s', async (_label, query, param) => {
    const response = await call(gateway, `/v1/analytics/users?${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param, code: null } });
    expect(response.body.error.message).toContain(param);
  });

  it('answers 400 for a user name longer than a log keeps, and for bad dates on one user', async () => {
    const long = await call(gateway, `/v1/analytics/users/${'u'.repeat(513)}`);
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ type: 'invalid_request_error', param: 'user' });
    const dates = await call(gateway, `/v1/analytics/users/user-1?to=2024-02-30T00:00:00Z`);
    expect(dates.status).toBe(400);
    expect(dates.body.error).toMatchObject({ type: 'invalid_request_error', param: 'to' });
  });
});
