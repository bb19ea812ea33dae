import type { LogRow } from '../api';
import { href, routeClick } from '../router';

/** The MCP tools the gateway ran for this request (`x-gateway-mcp`), by model round, each linked to its own row. */
export function ToolCalls({ calls }: { calls: NonNullable<LogRow['tool_calls']> }) {
  return (
    <section aria-labelledby="tool-calls-title">
      <h3 id="tool-calls-title">Tool calls run by the gateway</h3>
      <div class="table-wrap">
        <table class="data compact tool-calls">
          <caption class="visually-hidden">Every MCP tool call the gateway ran for this request, by model round</caption>
          <thead>
            <tr>
              <th scope="col" class="num">
                Round
              </th>
              <th scope="col">Server</th>
              <th scope="col">Tool</th>
              <th scope="col">Result</th>
              <th scope="col" class="num">
                Latency
              </th>
            </tr>
          </thead>
          <tbody>
            {calls.map((call) => (
              <tr key={call.log_id}>
                <td data-label="Round" class="num">
                  {call.round}
                </td>
                <td data-label="Server">{call.server}</td>
                <td data-label="Tool">
                  <a href={href(`/logs/${call.log_id}`)} onClick={(e) => routeClick(e, `/logs/${call.log_id}`)}>
                    {call.tool}
                  </a>
                </td>
                <td data-label="Result">
                  <span class={call.is_error ? 'status status-4xx' : 'status status-2xx'}>{call.is_error ? 'error' : 'ok'}</span>
                </td>
                <td data-label="Latency" class="num">
                  {call.latency_ms} ms
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Each guardrail of the request and the answer: passed or failed, whether it could deny, and every check's reason. */
export function Guardrails({ results }: { results: NonNullable<LogRow['guardrails']> }) {
  const rows = (['input', 'output'] as const).flatMap((stage) =>
    (results[stage] ?? []).flatMap((guardrail) => guardrail.checks.map((check) => ({ stage, guardrail, check }))),
  );
  return (
    <section aria-labelledby="guardrails-title">
      <h3 id="guardrails-title">Guardrails</h3>
      <div class="table-wrap">
        <table class="data compact">
          <caption class="visually-hidden">Every guardrail check run on this request and its answer</caption>
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col">Guardrail</th>
              <th scope="col">Check</th>
              <th scope="col">Result</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ stage, guardrail, check }, i) => (
              <tr key={i}>
                <td data-label="Stage">{stage}</td>
                <td data-label="Guardrail">
                  {guardrail.name}
                  {guardrail.deny && <span class="tag">denies</span>}
                </td>
                <td data-label="Check">{check.type}</td>
                <td data-label="Result">
                  <span class={check.verdict ? 'status status-2xx' : 'status status-4xx'}>{check.verdict ? 'passed' : 'failed'}</span>
                </td>
                <td data-label="Reason">{check.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
