import { matchesQuery } from './condition-query';

const facts = {
  metadata: { tier: 'pro', level: '3', region: 'eu-west' },
  params: { model: 'gpt-4o', max_tokens: 500, temperature: 0.2, stream: true, response_format: { type: 'json_object' } },
};
const matches = (query: Record<string, unknown>) => matchesQuery(query, facts);

describe('matchesQuery', () => {
  it('a plain value means $eq; every key must match', () => {
    expect(matches({ 'metadata.tier': 'pro' })).toBe(true);
    expect(matches({ 'metadata.tier': 'pro', 'params.model': 'gpt-4o' })).toBe(true);
    expect(matches({ 'metadata.tier': 'pro', 'params.model': 'gpt-4o-mini' })).toBe(false);
    expect(matches({ 'params.stream': true })).toBe(true);
  });

  it.each([
    [{ 'metadata.tier': { $eq: 'pro' } }, true],
    [{ 'metadata.tier': { $ne: 'pro' } }, false],
    [{ 'metadata.missing': { $ne: 'pro' } }, true],
    [{ 'params.model': { $in: ['gpt-4o', 'o3'] } }, true],
    [{ 'params.model': { $nin: ['gpt-4o', 'o3'] } }, false],
    [{ 'params.max_tokens': { $gt: 499 } }, true],
    [{ 'params.max_tokens': { $gt: 500 } }, false],
    [{ 'params.max_tokens': { $gte: 500, $lte: 500 } }, true],
    [{ 'params.temperature': { $lt: 0.2 } }, false],
    [{ 'params.temperature': { $lte: 0.2 } }, true],
    [{ 'metadata.region': { $regex: '^eu-' } }, true],
    [{ 'metadata.region': { $regex: '^us-' } }, false],
    [{ 'params.max_tokens': { $regex: '5' } }, false],
    [{ 'params.response_format.type': 'json_object' }, true],
    [{ 'params.response_format.type.deeper': 'x' }, false],
  ])('%j → %s', (query, expected) => {
    expect(matches(query)).toBe(expected);
  });

  it('metadata strings compare as numbers against numbers', () => {
    expect(matches({ 'metadata.level': { $gte: 2 } })).toBe(true);
    expect(matches({ 'metadata.level': 3 })).toBe(true);
    expect(matches({ 'metadata.level': { $lt: 3 } })).toBe(false);
    expect(matches({ 'metadata.tier': { $gt: 1 } })).toBe(false);
  });

  it('$and and $or nest', () => {
    expect(matches({ $or: [{ 'metadata.tier': 'free' }, { 'params.max_tokens': { $gt: 100 } }] })).toBe(true);
    expect(matches({ $and: [{ 'metadata.tier': 'pro' }, { $or: [{ 'params.model': 'x' }, { 'params.model': 'y' }] }] })).toBe(false);
    expect(matches({ $and: [{ 'metadata.tier': 'pro' }, { $or: [{ 'params.model': 'x' }, { 'params.model': 'gpt-4o' }] }] })).toBe(true);
  });

  it('does not read inherited properties', () => {
    expect(matches({ 'params.constructor': { $ne: null } })).toBe(true);
    expect(matches({ 'params.toString': { $regex: '.' } })).toBe(false);
  });
});
