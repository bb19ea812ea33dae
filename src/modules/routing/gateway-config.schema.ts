import { isInt, isObject, unknownFields } from '../../common/config-fields';
import { isSecretHint } from '../../common/crypto/secret-box';
import { HEADER_VALUE_RULE, isHeaderValue } from '../../common/http/header-value';
import { hasUserinfo, isHttpUrl } from '../../common/http/http-url';
import { compileSafeRegex } from '../../common/regex/safe-regex';
import { validateGuardrails } from '../guardrails/guardrail-registry';
import { STRATEGY_MODES, type StrategyMode } from '../../context/route-plan';

/**
 * Validation of a gateway config (CONTRACT section 5). Returns every problem with the
 * path of the bad field, e.g. `targets[1].retry.attempts must be an integer from 0 to 10`.
 * A hand-written walker rather than a schema library: configs nest recursively and the
 * messages must name the exact field.
 */
export interface GatewayConfig {
  strategy?: { mode?: StrategyMode; on_status_codes?: number[]; conditions?: { query: Record<string, unknown>; then: string }[]; default?: string };
  provider?: string;
  api_key?: string;
  virtual_key?: string;
  provider_organization?: string;
  provider_project?: string;
  custom_host?: string;
  override_params?: Record<string, unknown>;
  retry?: { attempts?: number; on_status_codes?: number[] };
  request_timeout?: number;
  /** Refuse (400) what a translation would ignore, instead of naming it in x-gateway-ignored-params (CONTRACT section 12). */
  strict_params?: boolean;
  /** `"auto"`: the gateway places prompt-cache breakpoints for Anthropic-family targets when the client marked none (CONTRACT section 16). */
  cache_breakpoints?: 'auto' | 'none';
  cache?: { mode?: 'simple'; max_age?: number };
  circuit_breaker?: { failure_threshold?: number; window_ms?: number; cooldown_ms?: number; on_status_codes?: number[] };
  weight?: number;
  name?: string;
  targets?: GatewayConfig[];
  input_guardrails?: unknown[];
  output_guardrails?: unknown[];
  /** Registered MCP servers whose tools the gateway runs for the model (CONTRACT section 10); at any level, the whole config's union applies. */
  mcp_servers?: string[];
}

const FIELDS = new Set([
  'strategy',
  'provider',
  'api_key',
  'virtual_key',
  'provider_organization',
  'provider_project',
  'custom_host',
  'override_params',
  'retry',
  'request_timeout',
  'strict_params',
  'cache_breakpoints',
  'cache',
  'circuit_breaker',
  'weight',
  'name',
  'targets',
  'input_guardrails',
  'output_guardrails',
  'mcp_servers',
]);
const STRING_FIELDS = ['provider', 'api_key', 'virtual_key', 'provider_organization', 'provider_project', 'name'] as const;
const MAX_DEPTH = 5;

export function validateGatewayConfig(config: unknown, knownProviders: string[], path = 'config', depth = 0): string[] {
  if (!isObject(config)) return [`${path} must be a JSON object`];
  const problems: string[] = [];
  const at = (field: string) => `${path}.${field}`;

  for (const key of Object.keys(config)) if (!FIELDS.has(key)) problems.push(`${at(key)} is not a config field`);
  for (const field of STRING_FIELDS) {
    if (config[field] !== undefined && (typeof config[field] !== 'string' || config[field] === '')) problems.push(`${at(field)} must be a non-empty string`);
  }
  if (typeof config.provider === 'string' && !knownProviders.includes(config.provider)) {
    problems.push(`${at('provider')} '${config.provider}' is not a known provider (${knownProviders.join(', ')})`);
  }
  if (config.custom_host !== undefined && !isHttpUrl(config.custom_host)) problems.push(`${at('custom_host')} must be an http(s) URL`);
  else if (config.custom_host !== undefined && hasUserinfo(config.custom_host))
    problems.push(`${at('custom_host')} must not carry user:password@ (the gateway does not send it)`);
  problems.push(...headerFieldProblems(config, at));
  if (config.override_params !== undefined && !isObject(config.override_params)) problems.push(`${at('override_params')} must be an object`);
  if (config.request_timeout !== undefined && !isInt(config.request_timeout, 1, 3_600_000)) {
    problems.push(`${at('request_timeout')} must be an integer number of milliseconds from 1 to 3600000`);
  }
  if (config.strict_params !== undefined && typeof config.strict_params !== 'boolean') problems.push(`${at('strict_params')} must be a boolean`);
  if (config.cache_breakpoints !== undefined && config.cache_breakpoints !== 'auto' && config.cache_breakpoints !== 'none')
    problems.push(`${at('cache_breakpoints')} must be "auto" or "none"`);
  if (config.mcp_servers !== undefined && !isSlugList(config.mcp_servers))
    problems.push(`${at('mcp_servers')} must be an array of MCP server slugs ([a-z0-9-]+)`);
  if (config.weight !== undefined && !(typeof config.weight === 'number' && config.weight >= 0 && Number.isFinite(config.weight))) {
    problems.push(`${at('weight')} must be a number >= 0`);
  }
  problems.push(
    ...validateRetry(config.retry, at('retry')),
    ...validateCache(config.cache, at('cache')),
    ...validateCircuitBreaker(config.circuit_breaker, at('circuit_breaker')),
  );
  for (const field of ['input_guardrails', 'output_guardrails']) {
    if (config[field] !== undefined) problems.push(...validateGuardrails(config[field], at(field)));
  }

  const targets = config.targets;
  if (targets !== undefined) {
    if (!Array.isArray(targets) || targets.length === 0) problems.push(`${at('targets')} must be a non-empty array`);
    else if (depth >= MAX_DEPTH) problems.push(`${at('targets')} nests deeper than ${MAX_DEPTH} levels`);
    else targets.forEach((t, i) => problems.push(...validateGatewayConfig(t, knownProviders, `${at('targets')}[${i}]`, depth + 1)));
  }
  problems.push(...validateStrategy(config, at('strategy')));
  return problems;
}

/**
 * Fields sent as header values (`OpenAI-Organization`, `OpenAI-Project`, the key in
 * `Authorization`): checked here, so that a bad one is a 400 when the config is given (stored
 * or inline), not a 502 on every request. An `api_key` may be a service account's JSON
 * (Vertex AI, never sent as is) or, in a stored config's PATCH, the hint a read showed.
 */
function headerFieldProblems(config: Record<string, unknown>, at: (field: string) => string): string[] {
  const problems: string[] = [];
  for (const field of ['provider_organization', 'provider_project', 'api_key']) {
    const value = config[field];
    if (typeof value !== 'string' || isHeaderValue(value)) continue;
    if (field === 'api_key' && (value.trimStart().startsWith('{') || isSecretHint(value))) continue;
    problems.push(`${at(field)} ${HEADER_VALUE_RULE}`);
  }
  return problems;
}

function isSlugList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((slug) => typeof slug === 'string' && /^[a-z0-9-]+$/.test(slug));
}

function validateRetry(retry: unknown, path: string): string[] {
  if (retry === undefined) return [];
  if (!isObject(retry)) return [`${path} must be an object`];
  const problems = unknownFields(retry, ['attempts', 'on_status_codes'], path);
  if (retry.attempts !== undefined && !isInt(retry.attempts, 0, 10)) problems.push(`${path}.attempts must be an integer from 0 to 10`);
  problems.push(...validateStatusCodes(retry.on_status_codes, `${path}.on_status_codes`));
  return problems;
}

function validateCache(cache: unknown, path: string): string[] {
  if (cache === undefined) return [];
  if (!isObject(cache)) return [`${path} must be an object`];
  const problems = unknownFields(cache, ['mode', 'max_age'], path);
  // Semantic (similarity) caching needs an embedding model and a vector index: not built yet.
  if (cache.mode !== undefined && cache.mode !== 'simple') problems.push(`${path}.mode must be 'simple' (semantic caching is not supported)`);
  if (cache.max_age !== undefined && !isInt(cache.max_age, 1, 31_536_000))
    problems.push(`${path}.max_age must be an integer number of seconds from 1 to 31536000`);
  return problems;
}

function validateCircuitBreaker(breaker: unknown, path: string): string[] {
  if (breaker === undefined) return [];
  if (!isObject(breaker)) return [`${path} must be an object`];
  const problems = unknownFields(breaker, ['failure_threshold', 'window_ms', 'cooldown_ms', 'on_status_codes'], path);
  if (breaker.failure_threshold !== undefined && !isInt(breaker.failure_threshold, 1, 1000)) {
    problems.push(`${path}.failure_threshold must be an integer from 1 to 1000`);
  }
  for (const field of ['window_ms', 'cooldown_ms']) {
    if (breaker[field] !== undefined && !isInt(breaker[field], 1, 86_400_000))
      problems.push(`${path}.${field} must be an integer number of milliseconds from 1 to 86400000`);
  }
  problems.push(...validateStatusCodes(breaker.on_status_codes, `${path}.on_status_codes`));
  return problems;
}

function validateStrategy(config: Record<string, unknown>, path: string): string[] {
  const strategy = config.strategy;
  if (strategy === undefined) return [];
  if (!isObject(strategy)) return [`${path} must be an object`];
  const problems = unknownFields(strategy, ['mode', 'on_status_codes', 'conditions', 'default'], path);
  const mode = strategy.mode;
  if (!STRATEGY_MODES.includes(mode as StrategyMode)) {
    problems.push(`${path}.mode must be one of ${STRATEGY_MODES.join(', ')}`);
    return problems;
  }
  problems.push(...validateStatusCodes(strategy.on_status_codes, `${path}.on_status_codes`));
  const targets = Array.isArray(config.targets) ? config.targets : [];
  if (mode !== 'single' && targets.length === 0) problems.push(`${path}.mode '${mode}' needs targets`);
  if (mode === 'loadbalance' && targets.length > 0 && !targets.some((t) => !isObject(t) || t.weight === undefined || (t.weight as number) > 0)) {
    problems.push(`${path}.mode 'loadbalance' needs a target with weight > 0`);
  }
  const names = targets.map((t) => (isObject(t) ? t.name : undefined)).filter((n) => typeof n === 'string');
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate !== undefined) problems.push(`${path.replace(/strategy$/, 'targets')} has two targets named '${duplicate}'`);
  if (mode === 'conditional') {
    const names = new Set(targets.map((t) => (isObject(t) ? t.name : undefined)).filter(Boolean));
    const conditions = strategy.conditions;
    if (!Array.isArray(conditions) || conditions.length === 0) problems.push(`${path}.conditions must be a non-empty array`);
    else {
      conditions.forEach((c, i) => {
        const at = `${path}.conditions[${i}]`;
        if (!isObject(c) || !isObject(c.query)) problems.push(`${at}.query must be an object`);
        else problems.push(...validateQuery(c.query, `${at}.query`));
        if (!isObject(c) || typeof c.then !== 'string' || !names.has(c.then)) problems.push(`${at}.then must name a target`);
      });
    }
    if (strategy.default !== undefined && (typeof strategy.default !== 'string' || !names.has(strategy.default))) {
      problems.push(`${path}.default must name a target`);
    }
  }
  return problems;
}

const FIELD_OPERATORS = new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$regex']);

/** A condition query: `metadata.*` / `params.*` keys, field operators, `$and` / `$or` of queries. */
function validateQuery(query: Record<string, unknown>, path: string): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    const at = `${path}.${key}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) problems.push(`${at} must be a non-empty array of queries`);
      else value.forEach((q, i) => problems.push(...(isObject(q) ? validateQuery(q, `${at}[${i}]`) : [`${at}[${i}] must be an object`])));
    } else if (key.startsWith('$')) {
      problems.push(`${at} is not a query operator here (use $and or $or, or a metadata.* / params.* field)`);
    } else if (!/^(metadata|params)\.[^.]+(\.[^.]+)*$/.test(key)) {
      problems.push(`${at}: query fields must start with metadata. or params.`);
    } else if (isObject(value)) {
      for (const [operator, operand] of Object.entries(value)) {
        if (!FIELD_OPERATORS.has(operator)) problems.push(`${at}.${operator} is not an operator (${[...FIELD_OPERATORS].join(' ')})`);
        else if ((operator === '$in' || operator === '$nin') && !Array.isArray(operand)) problems.push(`${at}.${operator} must be an array`);
        else if (operator === '$regex') {
          const problem =
            typeof operand === 'string' && operand.length <= 1000
              ? compileSafeRegex(operand).problem
              : 'must be a regular expression string of at most 1000 characters';
          if (problem) problems.push(`${at}.$regex ${problem}`);
        }
      }
    }
  }
  return problems;
}

function validateStatusCodes(codes: unknown, path: string): string[] {
  if (codes === undefined) return [];
  if (!Array.isArray(codes) || !codes.every((c) => isInt(c, 100, 599))) return [`${path} must be an array of HTTP status codes`];
  return [];
}
