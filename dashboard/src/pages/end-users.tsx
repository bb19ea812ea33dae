import { PERIODS } from './resources';
import type { EndUser } from '../api';
import type { FormSpec } from './resource-spec';

/**
 * The budget record of an end user (the `user` value requests carry, the OpenAI `user`
 * field): the form the End users page (end-users-page.tsx, which lists them) creates and
 * edits it with.
 */
export const END_USERS: FormSpec<EndUser> = {
  singular: 'end user',
  path: '/v1/end-users',
  idOf: (row) => row.user,
  nameOf: (row) => row.user,
  fields: [
    {
      name: 'user',
      label: 'User',
      kind: 'text',
      required: true,
      createOnly: true,
      placeholder: 'alice@example.com',
      help: 'Exactly as requests send it in user.',
    },
    {
      name: 'budget_limit_usd',
      label: 'Budget (USD)',
      kind: 'number',
      nullable: true,
      help: 'Requests are refused (402) once the period’s spend reaches it. Empty: no budget.',
    },
    {
      name: 'budget_period',
      label: 'Budget period',
      kind: 'select',
      options: PERIODS,
      nullable: true,
      help: 'No period: the budget counts all spend, for good.',
    },
    {
      name: 'metadata',
      label: 'Metadata (JSON)',
      kind: 'json',
      json: 'object',
      placeholder: '{"plan": "free"}',
      help: 'Notes of your own, such as a plan or a customer id.',
    },
  ],
};
