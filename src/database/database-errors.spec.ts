import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable, isDataError, isDataException } from './database-errors';

const pgError = (code: string, message = 'pg error') => Object.assign(new Error(message), { code });
const wrapped = (code: string) => new QueryFailedError('select 1', [], pgError(code));

describe('database errors', () => {
  it.each([
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', pgError('ECONNRESET')],
    ['an unknown host', pgError('ENOTFOUND')],
    ['a server shutting down (57P01)', wrapped('57P01')],
    ['too many connections (53300)', wrapped('53300')],
    ['a broken connection (08006)', wrapped('08006')],
    ["pg-pool's connect timeout", new Error('timeout exceeded when trying to connect')],
    ['a connection ended mid-query', new Error('Connection terminated unexpectedly')],
  ])('counts %s as the database being unavailable', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a syntax error (42601)', wrapped('42601')],
    ['a unique violation (23505)', wrapped('23505')],
    ['a file system error', pgError('ENOENT')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('does not count %s as an outage', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('tells data exceptions (class 22) from other row errors (23, 54)', () => {
    expect([isDataException(wrapped('22P05')), isDataError(wrapped('22P05'))]).toEqual([true, true]);
    expect([isDataException(wrapped('23505')), isDataError(wrapped('23505'))]).toEqual([false, true]);
    expect([isDataException(wrapped('54000')), isDataError(wrapped('54000'))]).toEqual([false, true]);
    expect(isDataError(wrapped('40001'))).toBe(false);
  });
});
