import { GatewayError } from '../errors/gateway-error';
import { all, checkBody, isArray, isBoolean, isInt, isNumber, isOneOf, isString } from './body-rules';

const schema = {
  required: { model: isString(5), items: all(isArray(1), (v) => ((v as unknown[]).every((x) => x === 1) ? null : 'items[0] must be 1')) },
  optional: { t: isNumber(0, 2), n: isInt(1), flag: isBoolean, mode: isOneOf(['a', 'b']) },
};

function problemOf(body: Record<string, unknown>): GatewayError {
  try {
    checkBody(body, schema);
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a 400');
}

describe('checkBody', () => {
  it('passes a good body and ignores unknown and null optional fields', () => {
    expect(() => checkBody({ model: 'm', items: [1], extra: { any: true }, t: null }, schema)).not.toThrow();
  });

  it('lists every problem, with param naming the first field', () => {
    const error = problemOf({ model: 'toolong', items: [], t: 3, n: 1.5, flag: 'yes', mode: 'c' });
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      'model must be shorter than or equal to 5 characters; items should not be empty; t must not be greater than 2; ' +
        'n must be an integer number; flag must be a boolean value; mode must be one of the following values: a, b',
    );
    expect(error.param).toBe('model');
  });

  it('reports missing required fields and deeper paths named by a rule', () => {
    expect(problemOf({ items: [1] }).message).toBe('model must be a string');
    const deeper = problemOf({ model: 'm', items: [2] });
    expect(deeper.param).toBe('items[0]');
  });

  it('rejects NaN-like numbers', () => {
    expect(problemOf({ model: 'm', items: [1], t: Number.POSITIVE_INFINITY }).message).toBe('t must be a number');
  });
});
