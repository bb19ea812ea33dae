import type { ComponentChildren } from 'preact';
import { Lexer, type Token, type Tokens } from 'marked';

/**
 * Markdown as models write it (paragraphs, headings, lists, code, emphasis, links, tables,
 * quotes), read by marked's lexer and drawn as Preact elements: nothing is ever set as HTML,
 * so raw HTML in an answer shows as the text it is, links go only to http(s) and mailto
 * addresses, and images are named by their address, not loaded (the dashboard's CSP forbids
 * remote images anyway).
 */
export function Markdown({ text }: { text: string }) {
  let tokens: Token[];
  try {
    tokens = Lexer.lex(text);
  } catch {
    return <p>{text}</p>;
  }
  return <div class="markdown">{blocks(tokens)}</div>;
}

const SAFE_LINK = /^(https?:|mailto:)/i;

function blocks(tokens: Token[]): ComponentChildren[] {
  return tokens.map((token, i) => block(token, i));
}

function block(token: Token, key: number): ComponentChildren {
  switch (token.type) {
    case 'space':
      return null;
    case 'paragraph':
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens)}</p>;
    case 'heading': {
      const heading = token as Tokens.Heading;
      // Inside a message: headings drawn small, one level under the page's own.
      return (
        <p key={key} class={`md-heading md-h${heading.depth}`}>
          <strong>{inline(heading.tokens)}</strong>
        </p>
      );
    }
    case 'code':
      return (
        <pre key={key} class="code">
          <code>{(token as Tokens.Code).text}</code>
        </pre>
      );
    case 'blockquote':
      return <blockquote key={key}>{blocks((token as Tokens.Blockquote).tokens)}</blockquote>;
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map((item, j) => (
        <li key={j}>
          {item.tokens.length === 1 && item.tokens[0].type === 'text'
            ? inline((item.tokens[0] as Tokens.Text).tokens ?? [item.tokens[0]])
            : blocks(item.tokens)}
        </li>
      ));
      return list.ordered ? (
        <ol key={key} start={typeof list.start === 'number' ? list.start : undefined}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case 'table': {
      const table = token as Tokens.Table;
      return (
        <table key={key} class="data compact md-table">
          <thead>
            <tr>
              {table.header.map((cell, j) => (
                <th key={j} scope="col">
                  {inline(cell.tokens)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((row, r) => (
              <tr key={r}>
                {row.map((cell, j) => (
                  <td key={j}>{inline(cell.tokens)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
    }
    case 'hr':
      return <hr key={key} />;
    case 'text': {
      const text = token as Tokens.Text;
      return <p key={key}>{text.tokens ? inline(text.tokens) : text.text}</p>;
    }
    default:
      // Raw HTML and anything else: its source, as text.
      return <p key={key}>{token.raw}</p>;
  }
}

function inline(tokens: Token[] | undefined): ComponentChildren[] {
  return (tokens ?? []).map((token, i) => span(token, i));
}

function span(token: Token, key: number): ComponentChildren {
  switch (token.type) {
    case 'text':
    case 'escape': {
      const text = token as Tokens.Text;
      return text.tokens ? <span key={key}>{inline(text.tokens)}</span> : text.text;
    }
    case 'strong':
      return <strong key={key}>{inline((token as Tokens.Strong).tokens)}</strong>;
    case 'em':
      return <em key={key}>{inline((token as Tokens.Em).tokens)}</em>;
    case 'del':
      return <del key={key}>{inline((token as Tokens.Del).tokens)}</del>;
    case 'codespan':
      return <code key={key}>{(token as Tokens.Codespan).text}</code>;
    case 'br':
      return <br key={key} />;
    case 'link': {
      const link = token as Tokens.Link;
      if (!SAFE_LINK.test(link.href)) return <span key={key}>{inline(link.tokens)}</span>;
      return (
        <a key={key} href={link.href} rel="noopener noreferrer nofollow" target="_blank">
          {inline(link.tokens)}
        </a>
      );
    }
    case 'image': {
      const image = token as Tokens.Image;
      return (
        <span key={key} class="image-ref">
          <span class="tag">image</span> {image.text || image.href}
        </span>
      );
    }
    default:
      return token.raw;
  }
}
