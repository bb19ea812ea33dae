/**
 * The budget and rate-limit fields every spending object's form shares (API keys, virtual
 * keys, workspaces), and the budget periods they offer (end users use them too).
 */
import type { FieldSpec } from './resource-spec';

export const PERIODS = [
  { value: '', label: 'No budget period' },
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'monthly', label: 'Monthly' },
];

export const limitFields: FieldSpec[] = [
  {
    name: 'budget_limit_usd',
    label: 'Budget (USD)',
    kind: 'number',
    nullable: true,
    help: 'Requests are refused (402) once the period’s spend reaches it. Empty: no budget.',
  },
  { name: 'budget_period', label: 'Budget period', kind: 'select', options: PERIODS, nullable: true },
  {
    name: 'rate_limits',
    label: 'Rate limits (JSON)',
    kind: 'json',
    json: 'array',
    placeholder: '[{"type": "requests", "unit": "rpm", "value": 60}]',
    help: 'A list of {type: requests or tokens, unit: rpm, rph or rpd, value}.',
  },
  { name: 'expires_at', label: 'Expires at', kind: 'datetime', nullable: true, help: 'Empty: never.' },
];
