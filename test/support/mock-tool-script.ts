/**
 * The tool script every chat mock follows (OpenAI chat, Anthropic, Gemini, the Responses API,
 * Bedrock Converse): tests of a tool loop write, in the user's message, which tools the "model"
 * calls round after round, and each mock answers it in its own wire format.
 *
 * Syntax: the LAST user text message (a user turn holding text, not tool results) starts with
 * `tools:`, followed by steps separated by `|`, each step one or more calls separated by `;`,
 * each call a tool name and its arguments as a JSON object (omitted: {}):
 *
 *   tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}
 *
 * A `|` or `;` inside the JSON is part of it (the arguments are scanned as JSON, not split).
 * Round = the assistant tool-call turns after that user message. While round < steps the model
 * calls the step's tools (parallel calls when the step has several), with those arguments; a call
 * to a tool the request does not offer is not made: the answer is the text `no tool <name>`.
 * After the last step the answer is the text `results: ` and the texts of every tool result after
 * the user message, in order, joined by ` / `. A script that does not parse is answered with the
 * text `bad tool script: <why>`.
 *
 * Each mock turns its conversation into ScriptTurns (what counts as a call turn and a result is
 * the vendor's business) and renders the ScriptAnswer in its own shapes.
 */

export const SCRIPT_TRIGGER = 'tools:';

export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The arguments as compact JSON, as the APIs put them on the wire. */
  json: string;
}

/** One turn of a conversation, as the script sees it. */
export type ScriptTurn =
  | { kind: 'user'; text: string }
  /** An assistant turn that called tools (however many). */
  | { kind: 'calls' }
  /** One tool result, its text as the script reports it. */
  | { kind: 'result'; text: string };

export type ScriptAnswer = { calls: ScriptedCall[] } | { text: string };

/** The steps of a script text, or why it does not parse; null when the text is no script. */
export function parseToolScript(text: string): { steps: ScriptedCall[][] } | { problem: string } | null {
  if (!text.startsWith(SCRIPT_TRIGGER)) return null;
  const source = text.slice(SCRIPT_TRIGGER.length);
  const steps: ScriptedCall[][] = [];
  let step: ScriptedCall[] = [];
  let at = skipSpaces(source, 0);
  if (at === source.length) return { steps };
  for (;;) {
    const nameStart = at;
    while (at < source.length && !/[\s{;|]/.test(source[at])) at++;
    const name = source.slice(nameStart, at);
    if (!name) return { problem: `a tool name expected at ${nameStart}` };
    at = skipSpaces(source, at);
    let args: Record<string, unknown> = {};
    if (source[at] === '{') {
      const end = jsonObjectEnd(source, at);
      if (end === -1) return { problem: `unterminated arguments of ${name}` };
      try {
        args = JSON.parse(source.slice(at, end));
      } catch (error) {
        return { problem: `arguments of ${name}: ${(error as Error).message}` };
      }
      at = skipSpaces(source, end);
    }
    step.push({ name, arguments: args, json: JSON.stringify(args) });
    if (at === source.length) break;
    const separator = source[at];
    if (separator !== ';' && separator !== '|') return { problem: `";" or "|" expected after ${name}` };
    if (separator === '|') {
      steps.push(step);
      step = [];
    }
    at = skipSpaces(source, at + 1);
  }
  steps.push(step);
  return { steps };
}

function skipSpaces(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at])) at++;
  return at;
}

/** The index after the JSON object starting at `start` (braces counted outside strings), -1 when it never closes. */
function jsonObjectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * What the model answers to a conversation whose last user text is a script (null when it is
 * not: the mock answers as it otherwise does). `offered`: the names of the tools the request
 * offers (none when tool choice is "none").
 */
export function answerToolScript(turns: readonly ScriptTurn[], offered: Iterable<string>): ScriptAnswer | null {
  let userAt = -1;
  for (let i = turns.length - 1; i >= 0 && userAt === -1; i--) if (turns[i].kind === 'user') userAt = i;
  if (userAt === -1) return null;
  const script = parseToolScript((turns[userAt] as { text: string }).text);
  if (!script) return null;
  if ('problem' in script) return { text: `bad tool script: ${script.problem}` };

  const after = turns.slice(userAt + 1);
  const round = after.filter((turn) => turn.kind === 'calls').length;
  if (round < script.steps.length) {
    const names = new Set(offered);
    const missing = script.steps[round].find((call) => !names.has(call.name));
    return missing ? { text: `no tool ${missing.name}` } : { calls: script.steps[round] };
  }
  const results = after.flatMap((turn) => (turn.kind === 'result' ? [turn.text] : []));
  return { text: 'results: ' + results.join(' / ') };
}

/**
 * Arguments JSON in token-like fragments, the way the APIs stream it: runs of punctuation and
 * runs of the rest ('{"location":"Paris"}' -> '{"', 'location', '":"', 'Paris', '"}').
 */
export function argumentFragments(json: string): string[] {
  return json.match(/[{}[\]":,]+|[^{}[\]":,]+/g) ?? [json];
}

/** The text of content that is a string or a list of text parts / blocks ({text}). */
export function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}
