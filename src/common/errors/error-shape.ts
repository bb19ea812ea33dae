import type { IncomingHttpHeaders } from 'node:http';

/** What an error body is made of, whichever shape it takes. */
export interface ShapedError {
  status: number;
  type: string;
  message: string;
  code: string | null;
  param: string | null;
  /** The gateway's own extra fields (a guardrail's results, a budget's figures), kept in every shape. */
  details: Record<string, unknown>;
}

/**
 * The error body of one client dialect (CONTRACT section 3 and 12): every error the
 * gateway answers on a dialect's routes, before or after routing, takes that dialect's
 * shape so its SDK raises its own error type. OpenAI's is the default.
 */
export interface ErrorShape {
  /** Whether a request to `path` with these headers is this dialect's. */
  matches(path: string, headers: IncomingHttpHeaders): boolean;
  body(error: ShapedError): unknown;
}

/** OpenAI's `{"error": {message, type, param, code}}`: every route no other shape claims. */
export const OPENAI_ERROR_SHAPE: ErrorShape = {
  matches: () => true,
  body: (error) => ({ error: { message: error.message, type: error.type, param: error.param, code: error.code, ...error.details } }),
};

/** The first of `shapes` that claims the request, else OpenAI's. */
export function errorShapeFor(shapes: readonly ErrorShape[], path: string, headers: IncomingHttpHeaders): ErrorShape {
  return shapes.find((shape) => shape.matches(path, headers)) ?? OPENAI_ERROR_SHAPE;
}
