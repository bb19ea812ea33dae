import { useState } from 'preact/hooks';
import type { Conversation, Message, Part } from '../conversation';
import { pretty } from '../format';
import { Markdown } from './markdown';

const ROLE_LABELS: Record<string, string> = { system: 'System', developer: 'Developer', user: 'User', assistant: 'Assistant', tool: 'Tool result' };
/** Longer texts are cut here, with a button for the rest: a pasted document should not hide the answer below it. */
const CUT_AT = 1500;

/**
 * A request read as a conversation: the answer first (the model's reply, or the error),
 * then the turns that led to it, tool calls and their results paired by id, inline images
 * as thumbnails.
 */
export function ConversationView({ conversation, error, streamed }: { conversation: Conversation; error: string | null; streamed: boolean }) {
  const { answers, messages, tools, finish, format } = conversation;
  return (
    <div class="conversation">
      <section aria-labelledby="answer-title" class="answer">
        <h3 id="answer-title">
          {conversation.format === 'MCP tool call' ? 'Result' : 'Answer'}
          {finish && (
            <>
              {' '}
              <span class="tag">{finish}</span>
            </>
          )}
          {streamed && (
            <>
              {' '}
              <span class="tag">streamed, assembled by the gateway</span>
            </>
          )}
        </h3>
        {error && (
          <p class="error-box" role="note" data-testid="answer-error">
            {error}
          </p>
        )}
        {answers.length === 0 && !error && <p class="muted">No answer recorded.</p>}
        {answers.map((answer, i) => (
          <MessageView key={i} message={answer} label={answers.length > 1 ? `Choice ${i + 1}` : undefined} />
        ))}
      </section>
      <section aria-labelledby="messages-title">
        <h3 id="messages-title">
          {conversation.format === 'MCP tool call' ? 'Call' : 'Conversation'}{' '}
          <span class="muted small-text">
            ({format}, {messages.length === 1 ? '1 message' : `${messages.length} messages`})
          </span>
        </h3>
        {messages.length === 0 ? (
          <p class="muted">The request holds no messages (a prompt's variables, say): see the raw JSON.</p>
        ) : (
          <ol class="messages">
            {messages.map((message, i) => (
              <li key={i}>
                <MessageView message={message} />
              </li>
            ))}
          </ol>
        )}
        {tools.length > 0 && (
          <p class="tools-offered">
            <span class="muted">Tools offered:</span>{' '}
            {tools.map((tool) => (
              <code key={tool} class="tool-name">
                {tool}
              </code>
            ))}
          </p>
        )}
      </section>
    </div>
  );
}

function MessageView({ message, label }: { message: Message; label?: string }) {
  const role = ROLE_LABELS[message.role] ?? message.role;
  return (
    <article class={`message role-${ROLE_LABELS[message.role] ? message.role : 'other'}`} aria-label={label ?? role}>
      <header class="message-role">
        {label ? `${label} · ${role}` : role}
        {message.name && <span class="muted"> ({message.name})</span>}
      </header>
      {message.parts.length === 0 ? <p class="muted">(empty)</p> : message.parts.map((part, i) => <PartView key={i} part={part} />)}
    </article>
  );
}

function PartView({ part }: { part: Part }) {
  switch (part.type) {
    case 'text':
      return <LongText text={part.text} class={part.refusal ? 'text refusal' : 'text'} prefix={part.refusal ? 'Refused: ' : ''} />;
    case 'thinking':
      return (
        <details class="thinking">
          <summary>Reasoning</summary>
          <LongText text={part.text} class="text" />
        </details>
      );
    case 'image':
      return part.src ? (
        <Thumbnail src={part.src} />
      ) : (
        <p class="image-ref">
          <span class="tag">image</span> <span class="url">{part.label}</span> <span class="muted small-text">(not loaded: a remote address)</span>
        </p>
      );
    case 'tool_call':
      return (
        <div class="tool-call">
          <p>
            <span class="tag tool">calls</span> <code class="tool-name">{part.name}</code>
            {part.id && <span class="muted small-text"> · {part.id}</span>}
          </p>
          <pre class="args">{prettyArgs(part.args)}</pre>
        </div>
      );
    case 'tool_result':
      return (
        <div class={part.isError ? 'tool-result failed' : 'tool-result'}>
          <p>
            <span class={part.isError ? 'tag tool-error' : 'tag tool'}>{part.isError ? 'error from' : 'result of'}</span>{' '}
            <code class="tool-name">{part.name ?? part.id ?? 'a tool'}</code>
            {part.name && part.id && <span class="muted small-text"> · {part.id}</span>}
          </p>
          {part.parts.length === 0 ? <p class="muted">(empty)</p> : part.parts.map((inner, i) => <PartView key={i} part={inner} />)}
        </div>
      );
    case 'other':
      return (
        <details class="other-part">
          <summary>
            <span class="tag">{part.label}</span> as JSON
          </summary>
          <pre class="args">{pretty(part.value)}</pre>
        </details>
      );
  }
}

/** An inline image, small; a click shows it at full width (browsers refuse to open data: URLs in a tab). */
function Thumbnail({ src }: { src: string }) {
  const [large, setLarge] = useState(false);
  return (
    <button
      type="button"
      class={large ? 'thumbnail large' : 'thumbnail'}
      aria-pressed={large}
      onClick={() => setLarge(!large)}
      title={large ? 'Show smaller' : 'Show larger'}
    >
      <img src={src} alt={large ? 'An image sent with the message, large' : 'An image sent with the message'} />
    </button>
  );
}

function LongText({ text, class: className, prefix = '' }: { text: string; class: string; prefix?: string }) {
  const [whole, setWhole] = useState(false);
  const cut = !whole && text.length > CUT_AT;
  return (
    <div class={className}>
      {prefix && <p>{prefix}</p>}
      <Markdown text={cut ? `${text.slice(0, CUT_AT)}…` : text} />
      {cut && (
        <button type="button" class="link-button" onClick={() => setWhole(true)}>
          Show all {text.length.toLocaleString('en-US')} characters
        </button>
      )}
    </div>
  );
}

/** Tool arguments indented when they are JSON, as sent when not. */
function prettyArgs(args: string): string {
  try {
    return pretty(JSON.parse(args));
  } catch {
    return args;
  }
}
