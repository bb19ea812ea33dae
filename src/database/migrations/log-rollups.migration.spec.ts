import type { QueryRunner } from 'typeorm';
import { LogRollups1764000700000 } from './1764000700000-LogRollups';

describe('LogRollups migration', () => {
  it('refuses a PostgreSQL older than 15 in words, before changing anything', async () => {
    const statements: string[] = [];
    const runner = {
      query: async (sql: string) => {
        statements.push(sql);
        return [{ version: '14.13', number: 140013 }];
      },
    } as unknown as QueryRunner;
    await expect(new LogRollups1764000700000().up(runner)).rejects.toThrow(/PostgreSQL 15 or newer.*server at DATABASE_URL is 14\.13/);
    expect(statements).toHaveLength(1);
  });
});
