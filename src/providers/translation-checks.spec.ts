import { GatewayError } from '../common/errors/gateway-error';
import { CHAT_MESSAGE_FIELDS, chatMessage, unsupportedBy } from './translation-checks';

const unsupported = unsupportedBy('acme');

function refusal(message: unknown): GatewayError {
  try {
    chatMessage(message, 2, unsupported);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('the message was accepted');
}

describe('chatMessage (the one role table of the chat translations)', () => {
  it('knows the five chat roles', () => {
    expect(Object.keys(CHAT_MESSAGE_FIELDS).sort()).toEqual(['assistant', 'developer', 'system', 'tool', 'user']);
  });

  it('gives back the message itself when each field is one its role may carry', () => {
    const assistant = { role: 'assistant', content: 'hi', tool_calls: [], refusal: null, annotations: [] };
    expect(chatMessage(assistant, 0, unsupported)).toBe(assistant);
    expect(chatMessage({ role: 'tool', content: 'ok', tool_call_id: 'call_1' }, 0, unsupported).role).toBe('tool');
    expect(chatMessage({ role: 'developer', content: 'be brief' }, 0, unsupported).role).toBe('developer');
  });

  it('refuses a field the role does not carry, naming it and the provider, but lets an empty one pass', () => {
    const error = refusal({ role: 'user', content: 'hi', tool_call_id: 'call_1' });
    expect(error.message).toBe('Provider acme does not support messages[2].tool_call_id');
    expect(chatMessage({ role: 'user', content: 'hi', name: null }, 0, unsupported).role).toBe('user');
    expect(refusal({ role: 'system', content: 'x', name: 'boss' }).message).toContain('messages[2].name');
  });

  it('refuses the function role, an unknown role and a message that is not an object', () => {
    expect(refusal({ role: 'function', name: 'f', content: '1' }).message).toContain('deprecated function role');
    expect(refusal({ role: 'toString', content: 'x' }).message).toBe('messages[2].role must be system, developer, user, assistant or tool');
    expect(refusal('hello').message).toBe('messages[2] must be an object');
  });
});
