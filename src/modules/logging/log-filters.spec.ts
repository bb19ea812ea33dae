import { searchPlan, withPrefixes } from './log-filters';

/** The plan's terms without the prefix marks every lexeme gets (withPrefixes), for reading the cuts. */
const unmarked = (terms: string[]) => terms.map((term) => term.replace(/':\*/g, "'"));

describe('searchPlan', () => {
  it.each([
    ["'refund'", { required: ["'refund'"], excluded: [] }],
    ["'refund' & 'policy'", { required: ["'refund'", "'policy'"], excluded: [] }],
    ["'hello' <-> 'from' <-> 'mock' & !'llama'", { required: ["'hello' <-> 'from' <-> 'mock'"], excluded: ["'llama'"] }],
    ["!( 'a' <-> 'b' ) & 'c'", { required: ["'c'"], excluded: ["( 'a' <-> 'b' )"] }],
    // & binds tighter than |: a | (b & c), one term.
    ["'a' | 'b' & 'c'", { required: ["'a' | 'b' & 'c'"], excluded: [] }],
    ["( 'a' | 'b' ) & 'c'", { required: ["( 'a' | 'b' )", "'c'"], excluded: [] }],
    ["'it''s & not' & 'x'", { required: ["'it''s & not'", "'x'"], excluded: [] }],
    ["!( 'a' ) <-> ( 'b' )", { required: ["!( 'a' ) <-> ( 'b' )"], excluded: [] }],
    ['', { required: [], excluded: [] }],
  ])('reads %s', (query, plan) => {
    const read = searchPlan(query);
    expect({ required: unmarked(read.required), excluded: unmarked(read.excluded) }).toEqual(plan);
  });

  it('matches every word as a prefix, in terms and exclusions alike', () => {
    expect(searchPlan("'refund' & !'draft'")).toEqual({ required: ["'refund':*"], excluded: ["'draft':*"] });
    expect(withPrefixes("'it''s' <-> 'ok'")).toBe("'it''s':* <-> 'ok':*");
    // A lexeme PostgreSQL already marked (a weight, a prefix) is left as it is.
    expect(withPrefixes("'a':* & 'b':A")).toBe("'a':* & 'b':A");
  });
});
