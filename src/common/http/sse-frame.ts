/** One Server-Sent Events frame: `event:` line when named, one `data:` line, blank line. */
export const sseFrame = (data: string, event?: string): string => (event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
