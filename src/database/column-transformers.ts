import { ValueTransformer } from 'typeorm';

/** PostgreSQL `numeric` arrives as a string; money amounts are used as numbers. */
export const numericColumn: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null || value === undefined ? null : Number(value)),
};
