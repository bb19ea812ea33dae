import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests Node's HTTP parser refuses before any route sees them (a control character in
 * a header, headers past 16 KiB, a malformed request line) get the gateway's error shape
 * instead of Node's bare `400 Bad Request` with an empty body. The socket is closed after:
 * the parser cannot go on from a request it could not read.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a timeout leaves no one to answer; a reply already begun cannot be replaced.
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const [status, reason, message, code] = describe(error);
    const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

function describe(error: NodeJS.ErrnoException): [number, string, string, string] {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'The request headers are larger than 16 KiB', 'headers_too_large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'The request was not received in time', 'request_timeout'];
    case 'HPE_INVALID_HEADER_TOKEN':
      return [400, 'Bad Request', 'A request header has a character not allowed in HTTP headers (a control character or a bare CR)', 'invalid_header'];
    default:
      return [400, 'Bad Request', `The request is not valid HTTP (${error.code ?? 'parse error'})`, 'invalid_http'];
  }
}
