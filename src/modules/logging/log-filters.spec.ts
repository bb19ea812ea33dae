import { searchPlan } from './log-filters';

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
    expect(searchPlan(query)).toEqual(plan);
  });
});
