/** The SQLSTATE of a PostgreSQL error, through TypeORM's wrapper or straight from pg. */
function sqlState(error: unknown): string | undefined {
  const code = (error as { driverError?: { code?: unknown }; code?: unknown }).driverError?.code ?? (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** PostgreSQL class 22: a value the database cannot hold (NUL character, bad JSON escape, out of range). */
export function isDataException(error: unknown): boolean {
  return /^22/.test(sqlState(error) ?? '');
}

/**
 * PostgreSQL classes 22 (data exception), 23 (integrity) and 54 (a limit such as the
 * size of an index entry): the row, not the database, is at fault.
 */
export function isDataError(error: unknown): boolean {
  const code = sqlState(error);
  return code !== undefined && /^(22|23|54)/.test(code);
}

const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The database cannot be reached or is going away: a refused or reset connection, a
 * timeout, or SQLSTATE classes 08 (connection), 53 (resources) and 57 (shutdown).
 * Anything else (a bad statement, a constraint) is a bug or bad data, not an outage.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = sqlState(error);
  if (code && /^(08|53|57)/.test(code)) return true;
  if (code && NETWORK_ERRORS.has(code)) return true;
  return /connection terminated|timeout exceeded when trying to connect|Connection terminated unexpectedly|not queryable/i.test(
    (error as Error)?.message ?? '',
  );
}
