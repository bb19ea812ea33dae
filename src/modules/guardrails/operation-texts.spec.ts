import { CHAT_TEXTS } from '../chat/chat-dialect';
import { MESSAGES_TEXTS } from '../messages/messages-dialect';
import { RESPONSES_TEXTS } from '../responses/responses-dialect';
import { realtimeEventSlots, type TextSlot } from './operation-texts';

/** Sets every slot to an upper-cased text, then reads them back through the same slots. */
function rewrite(slots: TextSlot[]): string[] {
  slots.forEach((slot) => slot.set(slot.text.toUpperCase()));
  return slots.map((slot) => slot.text);
}

describe('operation texts', () => {
  it('reads each slot as it is now: after a set, its text is the new one, as is the member it stands for', () => {
    // What the executor and the realtime check rely on to see that a redaction changed something.
    const answer = { choices: [{ message: { role: 'assistant', content: 'mail ada@example.com' } }] };
    const [slot] = CHAT_TEXTS.answer(answer);
    const before = slot.text;
    slot.set('mail [REDACTED_EMAIL]');
    expect(slot.text).toBe('mail [REDACTED_EMAIL]');
    expect(slot.text).not.toBe(before);
    expect(answer.choices[0].message.content).toBe('mail [REDACTED_EMAIL]');
  });

  it("finds each operation's request and answer texts and writes them back in place", () => {
    const chat = {
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
    };
    expect(rewrite(CHAT_TEXTS.request(chat))).toEqual(['BE BRIEF', 'HI']);
    expect(chat.messages[1].content).toEqual([
      { type: 'text', text: 'HI' },
      { type: 'image_url', image_url: { url: 'x' } },
    ]);

    const response = {
      output: [
        {
          type: 'message',
          content: [
            { type: 'output_text', text: 'yes' },
            { type: 'refusal', refusal: 'no' },
          ],
        },
      ],
    };
    expect(rewrite(RESPONSES_TEXTS.answer(response))).toEqual(['YES']);
    expect(response.output[0].content[0]).toEqual({ type: 'output_text', text: 'YES' });
    const responsesRequest = { instructions: 'be brief', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] };
    expect(rewrite(RESPONSES_TEXTS.request(responsesRequest))).toEqual(['BE BRIEF', 'HI']);
    expect(responsesRequest.instructions).toBe('BE BRIEF');

    const message = {
      content: [
        { type: 'text', text: 'a' },
        { type: 'tool_use', id: 't', name: 'f', input: {} },
        { type: 'text', text: 'b' },
      ],
    };
    expect(rewrite(MESSAGES_TEXTS.answer(message))).toEqual(['A', 'B']);
    expect(message.content.map((block) => block.text)).toEqual(['A', undefined, 'B']);

    const event = { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } };
    expect(rewrite(realtimeEventSlots(event))).toEqual(['HI']);
    expect(event.item.content[0].text).toBe('HI');
  });
});
