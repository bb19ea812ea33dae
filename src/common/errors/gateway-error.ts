/**
 * Every error the gateway makes itself (CONTRACT section 3). `type` and `code` are
 * stable; the exception filter writes them in the OpenAI or Anthropic shape.
 */
export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
    /** More members of the error object (a guardrail denial lists the guardrails). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  static invalidRequest(message: string, param: string | null = null, code: string | null = null): GatewayError {
    return new GatewayError(400, 'invalid_request_error', message, code, param);
  }

  static authentication(message: string): GatewayError {
    return new GatewayError(401, 'authentication_error', message, 'invalid_api_key');
  }

  static permission(message: string, code = 'permission_denied'): GatewayError {
    return new GatewayError(403, 'permission_error', message, code);
  }

  /** The request is valid but the state of the resource refuses it (the last admin key). */
  static conflict(message: string, code: string): GatewayError {
    return new GatewayError(409, 'conflict_error', message, code);
  }

  static notFound(message: string, code = 'not_found'): GatewayError {
    return new GatewayError(404, 'not_found_error', message, code);
  }

  static payloadTooLarge(limitBytes: number): GatewayError {
    return new GatewayError(413, 'invalid_request_error', `Request body is larger than the limit of ${limitBytes} bytes`, 'payload_too_large');
  }

  static upstreamUnreachable(message: string): GatewayError {
    return new GatewayError(502, 'upstream_error', message, 'upstream_unreachable');
  }

  static upstreamMalformed(message: string): GatewayError {
    return new GatewayError(502, 'upstream_error', message, 'upstream_malformed_response');
  }

  static upstreamTimeout(timeoutMs: number): GatewayError {
    return new GatewayError(504, 'timeout_error', `The provider did not answer within ${timeoutMs} ms`, 'request_timeout');
  }

  /** A registered MCP server could not be reached, refused the gateway's credentials or could not list its tools. */
  static mcpServerUnreachable(message: string): GatewayError {
    return new GatewayError(502, 'upstream_error', message, 'mcp_server_unreachable');
  }

  static mcpTimeout(message: string): GatewayError {
    return new GatewayError(504, 'timeout_error', message, 'mcp_timeout');
  }

  static unavailable(message: string): GatewayError {
    return new GatewayError(503, 'service_unavailable', message, 'gateway_unavailable');
  }

  /** This instance is stopping (SIGTERM): another one should take the request. */
  static shuttingDown(message = 'This gateway instance is shutting down; send the request to another one'): GatewayError {
    return new GatewayError(503, 'service_unavailable', message, 'shutting_down');
  }
}

/**
 * An error answer from the provider, passed through to the client with its own
 * status, body and content type (CONTRACT section 3: upstream errors pass through).
 */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Buffer,
    readonly contentType: string,
    readonly headers: Record<string, string>,
  ) {
    super(`Upstream answered ${status}`);
  }

  /** The upstream body as JSON when it is JSON, for the log. */
  parsedBody(): unknown {
    try {
      return JSON.parse(this.body.toString('utf8'));
    } catch {
      return this.body.toString('utf8').slice(0, 4096);
    }
  }
}

/** What the log records of a failure: its status, the error, and a provider's error body. */
/** An error as the log keeps it. */
export interface LoggedError {
  type: string;
  code: string | null;
  message: string;
}

/** Thrown when the client disconnected before the provider answered (logged as 499). */
export class ClientClosedRequestError extends Error {
  constructor(message = 'The client closed the connection') {
    super(message);
  }
}

export function describeFailure(exception: unknown): { status: number; error: LoggedError; responseBody?: unknown } {
  if (exception instanceof ClientClosedRequestError)
    return { status: 499, error: { type: 'client_error', code: 'client_closed_request', message: exception.message } };
  if (exception instanceof UpstreamHttpError) {
    return {
      status: exception.status,
      error: { type: 'upstream_error', code: String(exception.status), message: `The provider answered ${exception.status}` },
      responseBody: exception.parsedBody(),
    };
  }
  if (exception instanceof GatewayError) return { status: exception.status, error: { type: exception.type, code: exception.code, message: exception.message } };
  return { status: 500, error: { type: 'api_error', code: 'internal_error', message: 'Internal gateway error' } };
}
