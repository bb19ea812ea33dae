import type { LogRow } from '../api';
import { formatCost, formatInt } from '../format';

/** A request's tokens and what they cost. */
export function TokensAndCost({ log }: { log: LogRow }) {
  return (
    <section aria-labelledby="cost-title">
      <h3 id="cost-title">Tokens and cost</h3>
      <table class="data compact">
        <tbody>
          <tr>
            <th scope="row">Prompt tokens</th>
            <td class="num">{formatInt(log.prompt_tokens)}</td>
          </tr>
          <tr>
            <th scope="row">of which cached</th>
            <td class="num">{formatInt(log.cached_tokens)}</td>
          </tr>
          <tr>
            <th scope="row">of which written to the cache</th>
            <td class="num">{formatInt(log.cache_write_tokens)}</td>
          </tr>
          <tr>
            <th scope="row">Completion tokens</th>
            <td class="num">{formatInt(log.completion_tokens)}</td>
          </tr>
          <tr>
            <th scope="row">of which reasoning</th>
            <td class="num">{formatInt(log.reasoning_tokens)}</td>
          </tr>
          <tr>
            <th scope="row">Total tokens</th>
            <td class="num">{formatInt(log.total_tokens)}</td>
          </tr>
          <tr>
            <th scope="row">Cost</th>
            <td class="num" data-testid="detail-cost">
              <CostText log={log} />
            </td>
          </tr>
        </tbody>
      </table>
    </section>
  );
}

/**
 * A log row's cost in words. No cost with no usage on a failure is a request that used
 * nothing (a guardrail's 446 before the provider, an unreachable provider): it cost nothing.
 * Only a request that used a model without a known price has an unknown cost.
 */
function CostText({ log }: { log: LogRow }) {
  if (log.cost_usd !== null) return <>{formatCost(log.cost_usd)}</>;
  const usedNothing = log.prompt_tokens === null && log.completion_tokens === null && log.status_code >= 400;
  if (usedNothing && log.status_code === 446) return <span>Not sent to the provider (a guardrail denied it): no cost</span>;
  if (usedNothing) return <span>Failed without using the model: no cost</span>;
  return <span>No price known for this model: cost unknown</span>;
}
