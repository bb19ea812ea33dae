/**
 * Gemini API bodies for the mock upstream (mock-gemini.ts): request checks with Google's
 * messages, and the GenerateContentResponse chunks the "model" answers.
 *
 * Google parses request JSON into protos: a field may be spelled lowerCamelCase or in the proto's
 * snake_case (`systemInstruction` or `system_instruction`), and an unknown one is a 400.
 */
import { randomBytes } from 'node:crypto';
import { splitWords } from './mock-openai-chunks';
import { answerToolScript, argumentFragments, type ScriptTurn } from './mock-tool-script';

const REQUEST_FIELDS = ['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent'];
const GENERATION_CONFIG_FIELDS = [
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  '_responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'imageConfig',
  'mediaResolution',
];
const ROLES = ['user', 'model'];
export const FUNCTION_CALL_TOKENS = 5;
export const THOUGHTS_TOKENS = 5;

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const bothSpellings = (fields: string[]) => new Set(fields.flatMap((field) => [field, snake(field)]));
const KNOWN_REQUEST = bothSpellings(REQUEST_FIELDS);
const KNOWN_GENERATION_CONFIG = bothSpellings(GENERATION_CONFIG_FIELDS);

/** A field in either spelling. */
export function field(object: any, name: string): any {
  return object?.[name] ?? object?.[snake(name)];
}

const isObject = (value: unknown): value is Record<string, any> => value !== null && typeof value === 'object' && !Array.isArray(value);
const unknownName = (name: string, at?: string) => `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`;

/** The first problem of a GenerateContentRequest, as Google words it (a 400 INVALID_ARGUMENT), or null. */
export function invalidRequest(body: unknown): string | null {
  if (!isObject(body)) return 'Invalid JSON payload received. Expected an object.';
  const unknown = Object.keys(body).find((name) => !KNOWN_REQUEST.has(name));
  if (unknown) return unknownName(unknown);
  const config = field(body, 'generationConfig');
  if (config !== undefined) {
    if (!isObject(config))
      return `Invalid value at 'generation_config' (type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig), ${JSON.stringify(config)}`;
    const bad = Object.keys(config).find((name) => !KNOWN_GENERATION_CONFIG.has(name));
    if (bad) return unknownName(bad, 'generation_config');
  }
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified\n';
  for (const [i, content] of contents.entries()) {
    if (!isObject(content))
      return `Invalid value at 'contents[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(content)}`;
    if (content.role !== undefined && content.role !== '' && !ROLES.includes(content.role)) return 'Please use a valid role: user, model.';
    if (!Array.isArray(content.parts) || content.parts.length === 0)
      return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`;
  }
  const tools = body.tools;
  if (tools !== undefined && !Array.isArray(tools))
    return `Invalid value at 'tools' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tools)}`;
  for (const [i, tool] of (tools ?? []).entries()) {
    for (const [j, declaration] of (field(tool, 'functionDeclarations') ?? []).entries()) {
      if (typeof declaration?.name !== 'string' || !declaration.name)
        return `* GenerateContentRequest.tools[${i}].function_declarations[${j}].name: Name cannot be empty.\n`;
    }
  }
  return null;
}

const partsText = (parts: unknown) =>
  Array.isArray(parts)
    ? parts
        .filter((part) => typeof part?.text === 'string' && !part.thought)
        .map((part) => part.text)
        .join('')
    : '';

/** Characters a part stands for in promptTokenCount: its text, or the JSON of a function call or response. */
function partChars(part: any): number {
  if (typeof part?.text === 'string') return part.text.length;
  const call = field(part, 'functionCall') ?? field(part, 'functionResponse');
  return call ? JSON.stringify(call).length : 0;
}

export interface GeminiPlan {
  /** The parts of the answer: text pieces (one per word when streamed) or one functionCall. */
  pieces: Record<string, unknown>[][];
  /** Running candidatesTokenCount after each piece. */
  counts: number[];
  finishReason: 'STOP' | 'MAX_TOKENS';
  promptTokenCount: number;
  thoughts: number;
  candidateCount: number;
}

/**
 * What the "model" answers to a (valid) request; `stream` splits a text into one piece per
 * word. With thinkingConfig.includeThoughts and a budget above 0 the answer starts with a
 * thought summary part (`thought: true`), in a chunk of its own when streamed, as Gemini does.
 */
export function planGemini(body: any, stream: boolean): GeminiPlan {
  const plan = planAnswer(body, stream);
  const thinking = field(field(body, 'generationConfig'), 'thinkingConfig');
  if (!field(thinking, 'includeThoughts') || !plan.thoughts) return plan;
  const thought = { text: THOUGHT_SUMMARY, thought: true };
  if (!stream) return { ...plan, pieces: [[thought, ...plan.pieces[0]]] };
  return { ...plan, pieces: [[thought], ...plan.pieces], counts: [0, ...plan.counts] };
}

export const THOUGHT_SUMMARY = '**Thinking it over**\n\nThe user wants a short answer.';

function planAnswer(body: any, stream: boolean): GeminiPlan {
  const contents: any[] = body.contents;
  // A turn without a role is a user turn; function responses come in user turns.
  const userTurns = contents.filter((content) => content.role !== 'model');
  const lastUser = userTurns[userTurns.length - 1];
  const lastText = partsText(lastUser?.parts);
  const answeredFunction =
    contents[contents.length - 1].role !== 'model' && contents[contents.length - 1].parts.some((part: any) => field(part, 'functionResponse'));
  const config = field(body, 'generationConfig') ?? {};
  const system = field(body, 'systemInstruction');
  const chars =
    (system?.parts ?? []).reduce((n: number, part: any) => n + partChars(part), 0) +
    contents.reduce((n, content) => n + content.parts.reduce((m: number, part: any) => m + partChars(part), 0), 0);
  const common = {
    promptTokenCount: Math.max(1, Math.ceil(chars / 4)),
    thoughts: field(field(config, 'thinkingConfig'), 'thinkingBudget') > 0 ? THOUGHTS_TOKENS : 0,
    candidateCount: Number.isInteger(field(config, 'candidateCount')) && field(config, 'candidateCount') > 1 ? field(config, 'candidateCount') : 1,
  };

  const declarations = (body.tools ?? []).flatMap((tool: any) => field(tool, 'functionDeclarations') ?? []);
  const calling = field(field(body, 'toolConfig'), 'functionCallingConfig') ?? {};
  const allowed: unknown = field(calling, 'allowedFunctionNames');
  const script = answerToolScript(scriptTurns(contents), calling.mode === 'NONE' ? [] : declarations.map((declaration: any) => declaration.name));
  if (script && 'calls' in script) {
    // Parallel calls come as functionCall parts of one content, whole in one chunk.
    const parts = script.calls.map((call) => ({ functionCall: { name: call.name, args: call.arguments } }));
    return { ...common, pieces: [parts], counts: [script.calls.reduce((n, call) => n + argumentFragments(call.json).length, 0)], finishReason: 'STOP' };
  }
  if (!script && declarations.length && /weather/i.test(lastText) && !answeredFunction && calling.mode !== 'NONE') {
    const name = Array.isArray(allowed) && typeof allowed[0] === 'string' ? allowed[0] : declarations[0].name;
    return { ...common, pieces: [[{ functionCall: { name, args: { location: 'Paris' } } }]], counts: [FUNCTION_CALL_TOKENS], finishReason: 'STOP' };
  }

  let text = script ? script.text : lastText.startsWith('echo:') ? lastText.slice(5).trim() : 'Hello from mock';
  // The earliest stop sequence ends the text (finishReason stays STOP, as Gemini does).
  const stops: unknown = field(config, 'stopSequences');
  const cuts = (Array.isArray(stops) ? stops : []).map((stop) => (typeof stop === 'string' && stop ? text.indexOf(stop) : -1)).filter((at) => at !== -1);
  if (cuts.length) text = text.slice(0, Math.min(...cuts));
  let words = splitWords(text);
  let finishReason: GeminiPlan['finishReason'] = 'STOP';
  const max = field(config, 'maxOutputTokens');
  if (Number.isInteger(max) && max > 0 && words.length > max) {
    words = words.slice(0, max);
    finishReason = 'MAX_TOKENS';
  }
  if (!stream) return { ...common, pieces: [[{ text: words.join('') }]], counts: [words.length], finishReason };
  return { ...common, pieces: words.map((word) => [{ text: word }]), counts: words.map((_, i) => i + 1), finishReason };
}

/**
 * The contents as the tool script reads them: a model turn with functionCall parts is a call turn;
 * a user turn's functionResponse parts are results (the response's `output` (as Google documents
 * it), `content` or `result` when it
 * is a string, else the response as JSON); a user turn without them is user text.
 */
function scriptTurns(contents: any[]): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (const content of contents) {
    if (content.role === 'model') {
      if (content.parts.some((part: any) => field(part, 'functionCall'))) turns.push({ kind: 'calls' });
      continue;
    }
    const responses = content.parts.map((part: any) => field(part, 'functionResponse')).filter(Boolean);
    if (!responses.length) turns.push({ kind: 'user', text: partsText(content.parts) });
    for (const { response } of responses) {
      const text = ['output', 'content', 'result'].map((key) => response?.[key]).find((value) => typeof value === 'string') ?? JSON.stringify(response ?? {});
      turns.push({ kind: 'result', text });
    }
  }
  return turns;
}

/** The GenerateContentResponse chunks of a plan: one per piece, finishReason on the last, running usage on each. */
export function geminiChunks(plan: GeminiPlan, model: string): Record<string, unknown>[] {
  const responseId = randomBytes(15).toString('base64url');
  return plan.pieces.map((parts, i) => {
    const last = i === plan.pieces.length - 1;
    const candidatesTokenCount = plan.counts[i] * plan.candidateCount;
    const candidates = Array.from({ length: plan.candidateCount }, (_, index) => ({
      content: { parts, role: 'model' },
      ...(last ? { finishReason: plan.finishReason } : {}),
      index,
    }));
    return {
      candidates,
      usageMetadata: {
        promptTokenCount: plan.promptTokenCount,
        candidatesTokenCount,
        totalTokenCount: plan.promptTokenCount + candidatesTokenCount + plan.thoughts,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: plan.promptTokenCount }],
        ...(plan.thoughts ? { thoughtsTokenCount: plan.thoughts } : {}),
      },
      modelVersion: model,
      responseId,
    };
  });
}
