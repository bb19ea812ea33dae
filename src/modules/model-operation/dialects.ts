import type { IncomingHttpHeaders } from 'node:http';
import { errorShapeFor, type ErrorShape } from '../../common/errors/error-shape';
import { CHAT_DIALECT } from '../chat/chat-dialect';
import { GEMINI_DIALECT } from '../gemini/gemini-dialect';
import { MESSAGES_DIALECT } from '../messages/messages-dialect';
import { RESPONSES_DIALECT } from '../responses/responses-dialect';
import type { ModelDialect } from './model-operation';

/** The dialects clients speak (ARCHITECTURE, "Adding a dialect"): a new one is registered here. */
export const DIALECTS: readonly ModelDialect[] = [CHAT_DIALECT, RESPONSES_DIALECT, MESSAGES_DIALECT, GEMINI_DIALECT];

const ERROR_SHAPES: readonly ErrorShape[] = DIALECTS.flatMap((dialect) => (dialect.errors ? [dialect.errors] : []));

/** The error shape of the dialect whose routes `path` is on; OpenAI's for every other route. */
export function errorShapeOf(path: string, headers: IncomingHttpHeaders): ErrorShape {
  return errorShapeFor(ERROR_SHAPES, path, headers);
}
