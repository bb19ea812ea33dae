import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type ListPage, type McpServer, type McpServerTool } from '../api';
import { formatDateTime } from '../format';
import type { ResourceSpec } from './resource-spec';

/** The tools a server lists now, and which of them its allow-list lets callers use (`GET /v1/mcp-servers/{slug}/tools`). */
function McpTools({ slug }: { slug: string }) {
  const [tools, setTools] = useState<McpServerTool[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api<Omit<ListPage<McpServerTool>, 'next_cursor'>>('GET', `/v1/mcp-servers/${encodeURIComponent(slug)}/tools`).then(
      (listed) => live && setTools(listed.data),
      (e: ApiError) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [slug]);
  return (
    <section aria-labelledby="mcp-tools" data-testid="mcp-tools">
      <h3 id="mcp-tools">Tools</h3>
      {error ? (
        <p class="error-box" role="alert">
          The server could not be asked for its tools: {error}
        </p>
      ) : !tools ? (
        <p class="muted" role="status">
          Asking the server for its tools…
        </p>
      ) : tools.length === 0 ? (
        <p class="muted">The server lists no tools.</p>
      ) : (
        <table class="data compact">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Description</th>
              <th scope="col">Callers may use it</th>
            </tr>
          </thead>
          <tbody>
            {tools.map((tool) => (
              <tr key={tool.name}>
                <td data-label="Tool">
                  <code>{tool.name}</code>
                </td>
                <td data-label="Description">{tool.description ?? <span class="muted">none</span>}</td>
                <td data-label="Callers may use it">{tool.allowed ? 'yes' : <span class="muted">no: not in the allow-list</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const allowList = (row: McpServer) => {
  const allowed = row.allowed_tools;
  return allowed ? allowed.map((tool) => <code key={tool}>{tool} </code>) : <span class="muted">every tool it lists</span>;
};

/** The MCP server registry (CONTRACT section 10): servers the gateway runs tools on, their credentials masked, their allow-lists. */
export const MCP_SERVERS: ResourceSpec<McpServer> = {
  kind: 'mcp-server',
  title: 'MCP servers',
  singular: 'MCP server',
  path: '/v1/mcp-servers',
  intro: (
    <>
      MCP servers whose tools the gateway runs for models (<code>x-gateway-mcp: slug</code>) and serves to MCP clients (<code>/v1/mcp/slug</code>). Headers
      (credentials) are stored encrypted and shown masked: a masked value sent back keeps the stored one.
    </>
  ),
  idOf: (row) => row.slug,
  nameOf: (row) => row.name,
  columns: [
    { label: 'Name', render: (row) => <strong>{row.name}</strong> },
    { label: 'Slug', render: (row) => <code>{row.slug}</code> },
    { label: 'URL', render: (row) => <code>{row.url}</code> },
    { label: 'Allowed tools', render: allowList },
    { label: 'Updated', render: (row) => formatDateTime(row.updated_at) },
  ],
  fields: [
    { name: 'name', label: 'Name', kind: 'text', required: true },
    { name: 'slug', label: 'Slug', kind: 'text', required: true, createOnly: true, placeholder: 'docs' },
    { name: 'url', label: 'URL', kind: 'text', required: true, placeholder: 'https://mcp.example.com/mcp' },
    {
      name: 'headers',
      label: 'Headers (JSON)',
      kind: 'json',
      json: 'object',
      placeholder: '{"Authorization": "Bearer …"}',
      help: 'Credentials: encrypted, shown masked.',
    },
    { name: 'allowed_tools', label: 'Allowed tools', kind: 'list', nullable: true, help: 'Comma-separated. Empty: every tool the server lists.' },
    { name: 'description', label: 'Description', kind: 'text', nullable: true },
  ],
  details: (row) => <McpTools slug={row.slug} />,
  deleteLabel: 'Remove',
  empty: 'No MCP servers yet. Register one to let models use its tools through the gateway.',
};
