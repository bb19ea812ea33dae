import { PromptTemplate, renderTemplate, validateTemplate } from './prompt-template';

const template = (messages: Record<string, unknown>[], extra: Partial<PromptTemplate> = {}): PromptTemplate => ({ model: 'gpt-4o-mini', messages, ...extra });
const user = (content: unknown) => template([{ role: 'user', content }]);
const rendered = (t: PromptTemplate, variables: Record<string, unknown>) => renderTemplate(t, variables).messages[0] as { content: unknown };

describe('prompt templates', () => {
  describe('rendering', () => {
    it('fills variables without HTML escaping, in double and triple braces alike', () => {
      expect(rendered(user('{{a}} / {{{a}}} / {{&a}}'), { a: '<b>"Tom" & Jerry</b>' }).content).toBe(
        '<b>"Tom" & Jerry</b> / <b>"Tom" & Jerry</b> / <b>"Tom" & Jerry</b>',
      );
    });

    it('renders sections over lists, inverted sections, dotted names and numbers', () => {
      const t = user('{{#items}}- {{name}} x{{qty}}\n{{/items}}{{^items}}nothing{{/items}} for {{customer.name}}');
      expect(
        rendered(t, {
          items: [
            { name: 'Lamp', qty: 2 },
            { name: 'Desk', qty: 1 },
          ],
          customer: { name: 'Ada' },
        }).content,
      ).toBe('- Lamp x2\n- Desk x1\n for Ada');
      expect(rendered(t, { items: [], customer: { name: 'Ada' } }).content).toBe('nothing for Ada');
    });

    it('takes the call’s variables over the defaults, and ignores extra ones', () => {
      const t = template([{ role: 'user', content: '{{greeting}}, {{name}}' }], { variables: { greeting: 'Hello', name: 'you' } });
      expect(rendered(t, { name: 'Ada', unused: true }).content).toBe('Hello, Ada');
    });

    it('renders the text parts of a content array and leaves images alone', () => {
      const t = user([
        { type: 'text', text: 'Describe {{thing}}' },
        { type: 'image_url', image_url: { url: 'https://x.test/{{thing}}.png' } },
      ]);
      expect(rendered(t, { thing: 'it' }).content).toEqual([
        { type: 'text', text: 'Describe it' },
        { type: 'image_url', image_url: { url: 'https://x.test/{{thing}}.png' } },
      ]);
    });

    it('renders the strings inside tools and response_format, not other hyperparameters', () => {
      const t = template([{ role: 'user', content: 'hi' }], {
        hyperparameters: {
          stop: ['{{x}}'],
          tools: [{ type: 'function', function: { name: 'f', description: 'About {{x}}' } }],
          response_format: { type: 'json_schema', json_schema: { name: 's', schema: { enum: ['{{x}}'] } } },
        },
      });
      const { hyperparameters } = renderTemplate(t, { x: 'cats' });
      expect(hyperparameters.stop).toEqual(['{{x}}']);
      expect((hyperparameters.tools as any)[0].function.description).toBe('About cats');
      expect((hyperparameters.response_format as any).json_schema.schema.enum).toEqual(['cats']);
    });

    it('a variable used outside any section and not given is a 400 naming every missing one', () => {
      expect(() => renderTemplate(user('{{a}} {{b.c}} {{#opt}}{{inner}}{{/opt}}'), {})).toThrow(
        expect.objectContaining({ status: 400, code: 'missing_variable', param: 'variables.a', message: 'Missing prompt variables: a, b.c' }),
      );
    });

    it('null and false are given values (they render empty); a section may be left out', () => {
      expect(rendered(user('[{{a}}]{{#opt}}x{{/opt}}'), { a: null }).content).toBe('[]');
    });
  });

  describe('validation', () => {
    it('accepts a good template', () => {
      expect(() =>
        validateTemplate(template([{ role: 'system', content: 'Be {{tone}}' }], { hyperparameters: { max_tokens: 10, temperature: 0.5 } })),
      ).not.toThrow();
    });

    it.each([
      ['an unclosed section', user('{{#a}}'), 'messages[0].content'],
      ['an unclosed tag', user([{ type: 'text', text: 'x {{a' }]), 'messages[0].content[0].text'],
      ['a partial', user('{{> p}}'), 'messages[0].content'],
      ['a temperature out of range', template([{ role: 'user', content: 'x' }], { hyperparameters: { temperature: 9 } }), 'hyperparameters.temperature'],
      ['model inside hyperparameters', template([{ role: 'user', content: 'x' }], { hyperparameters: { model: 'x' } }), 'hyperparameters.model'],
      ['no model', { messages: [{ role: 'user', content: 'x' }] } as unknown as PromptTemplate, 'model'],
    ])('refuses %s naming the field', (_name, t, param) => {
      expect(() => validateTemplate(t)).toThrow(expect.objectContaining({ status: 400, param }));
    });
  });
});
