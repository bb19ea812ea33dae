import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { DataSource, Repository } from 'typeorm';
import { ApiKeysService } from '../modules/keys/api-keys.service';
import { ApiKeyEntity } from '../modules/keys/entities/api-key.entity';
import type { KeyChangeNotifier } from '../modules/keys/key-change-notifier';
import type { KeyLookupService } from '../modules/keys/key-lookup.service';
import { SpendService } from '../modules/keys/spend.service';
import { VirtualKeyEntity } from '../modules/keys/entities/virtual-key.entity';
import { VirtualKeysService } from '../modules/keys/virtual-keys.service';
import type { ProviderRegistry } from '../providers/registry';
import type { SecretBox } from '../common/crypto/secret-box';
import { RequestLogEntity } from '../modules/logging/entities/request-log.entity';
import type { WorkspaceDirectory } from '../modules/workspaces/workspace-directory';
import { toLogResponse } from '../modules/logging/logs.service';
import { ConfigsService } from '../modules/keys/configs.service';
import { ConfigVersionEntity } from '../modules/keys/entities/config-version.entity';
import { StoredConfigEntity } from '../modules/keys/entities/stored-config.entity';
import { PromptEntity } from '../modules/prompts/entities/prompt.entity';
import { PromptVersionEntity } from '../modules/prompts/entities/prompt-version.entity';
import { PromptsService } from '../modules/prompts/prompts.service';
import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import type { WorkspaceScope } from '../context/caller';
import { WorkspaceEntity } from '../modules/workspaces/workspace.entity';
import { WorkspacesService } from '../modules/workspaces/workspaces.service';
import { EndUserEntity } from '../modules/keys/entities/end-user.entity';
import { EndUsersService } from '../modules/keys/end-users.service';
import { McpServerEntity } from '../modules/mcp/entities/mcp-server.entity';
import { McpServersService } from '../modules/mcp/mcp-servers.service';
import type { McpRegistry } from '../modules/mcp/mcp-registry';
import type { McpClientPool } from '../modules/mcp/mcp-client-pool';
import { openApiDocumentOffline } from './openapi-document';
import { AuthService } from '../modules/auth/auth.service';
import { auditEntryResponse } from '../modules/audit/audit-log.service';
import { AuditLogEntity } from '../modules/audit/audit-log.entity';
import { overrideEntry } from '../modules/pricing/price-overrides.service';
import { PRICE_FIELDS } from '../modules/pricing/price-fields';
import { BatchAnalyticsService, toBatchResponse } from '../modules/logging/batch-analytics.service';

jest.setTimeout(60_000);

/**
 * The response schemas are classes written beside the mappers that build the answers (the
 * services return plain objects): these tests keep each schema's properties those of its
 * mapper's output, so the dashboard's generated types cannot silently fall behind.
 */
describe('the response schemas of the OpenAPI document', () => {
  let document: OpenAPIObject;
  beforeAll(async () => {
    document = await openApiDocumentOffline();
  });

  // The spend a key's answer reads, from a log that holds nothing, and its workspace's slug.
  const spend = new SpendService({ query: () => Promise.resolve([{ spent: 0, unpriced: 0 }]) } as unknown as DataSource);
  const workspaces = { byId: () => Promise.resolve({ slug: 'default' }) } as unknown as WorkspaceDirectory;

  /** A schema's properties, required ones apart. */
  function propertiesOf(name: string): { all: string[]; required: string[] } {
    const schema = document.components?.schemas?.[name] as SchemaObject | undefined;
    if (!schema?.properties) throw new Error(`no schema ${name} with properties in the document`);
    return { all: Object.keys(schema.properties).sort(), required: [...(schema.required ?? [])].sort() };
  }

  it("LogRowResponseDto: toLogResponse's keys, those always there required, the bodies, totals and snippet optional", () => {
    // A row read without its bodies (include_bodies=false) has none of the body columns.
    const row = Object.assign(new RequestLogEntity(), { createdAt: new Date() });
    const always = Object.keys(toLogResponse(row)).sort();
    const withBodies = Object.keys(
      toLogResponse(Object.assign(new RequestLogEntity(), { createdAt: new Date(), requestBody: {}, responseBody: {}, requestHeaders: {} })),
    );
    // `totals`: GET /v1/logs/{id} of a request (LogsService.get); `snippet`: a search's rows (LogsService.addSnippets).
    const every = [...withBodies, 'totals', 'snippet'].sort();

    const schema = propertiesOf('LogRowResponseDto');
    expect(schema.all).toEqual(every);
    expect(schema.required).toEqual(always);
  });

  it("the log list's page: object, data of LogRowResponseDto, next_cursor", () => {
    expect(propertiesOf('LogRowListResponseDto')).toEqual({ all: ['data', 'next_cursor', 'object'], required: ['data', 'next_cursor', 'object'] });
    const list = document.paths['/v1/logs'].get?.responses['200'] as { content: Record<string, { schema: unknown }> };
    expect(list.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LogRowListResponseDto' });
  });

  it("ApiKeyResponseDto: the keys of ApiKeysService's answer, all required; the creation's adds the secret", async () => {
    const service = new ApiKeysService({} as Repository<ApiKeyEntity>, {} as KeyChangeNotifier, spend, {} as KeyLookupService, workspaces);
    const row = Object.assign(new ApiKeyEntity(), { createdAt: new Date(), updatedAt: new Date(), budgetLimitUsd: null, budgetPeriod: null });
    const keys = Object.keys(await service['toResponse'](row)).sort();

    expect(propertiesOf('ApiKeyResponseDto')).toEqual({ all: keys, required: keys });
    expect(propertiesOf('ApiKeyCreatedResponseDto').all).toEqual([...keys, 'key'].sort());
  });

  it("VirtualKeyResponseDto: the keys of VirtualKeysService's answer, all required (the credential only as key_hint)", async () => {
    const service = new VirtualKeysService(
      {} as Repository<VirtualKeyEntity>,
      {} as ProviderRegistry,
      {} as SecretBox,
      {} as KeyChangeNotifier,
      spend,
      workspaces,
    );
    const row = Object.assign(new VirtualKeyEntity(), {
      createdAt: new Date(),
      updatedAt: new Date(),
      providerOptions: {},
      budgetLimitUsd: null,
      budgetPeriod: null,
      customHost: null,
    });
    const keys = Object.keys(await service['toResponse'](row)).sort();

    expect(propertiesOf('VirtualKeyResponseDto')).toEqual({ all: keys, required: keys });
    expect(keys).not.toContain('key');
    const list = document.paths['/v1/virtual-keys'].get?.responses['200'] as { content: Record<string, { schema: unknown }> };
    expect(list.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/VirtualKeyListResponseDto' });
  });

  const scope = { workspaceId: 'w', visible: null } as unknown as WorkspaceScope;
  /** A repository that finds `row` and, in its manager, `versions`: what get() and versions() read. */
  const repoOf = <T extends object>(row: object, versions: object[]) =>
    ({ findOneBy: () => Promise.resolve(row), manager: { find: () => Promise.resolve(versions) } }) as unknown as Repository<T>;
  const listSchemaOf = (path: string) =>
    (document.paths[path].get?.responses['200'] as { content: Record<string, { schema: unknown }> }).content['application/json'].schema;

  it("ConfigResponseDto and ConfigVersionResponseDto: the keys of ConfigsService's answers, all required", async () => {
    const row = Object.assign(new StoredConfigEntity(), { slug: 'c', config: {}, version: 1, createdAt: new Date(), updatedAt: new Date() });
    const version = Object.assign(new ConfigVersionEntity(), { version: 1, name: 'c', config: {}, createdAt: new Date() });
    const service = new ConfigsService(repoOf(row, [version]), {} as ProviderRegistry, {} as SecretBox, {} as KeyChangeNotifier, workspaces);
    const keys = Object.keys(await service.get(scope, 'c')).sort();
    const versionKeys = Object.keys((await service.versions(scope, 'c', 50)).data[0]).sort();

    expect(propertiesOf('ConfigResponseDto')).toEqual({ all: keys, required: keys });
    expect(propertiesOf('ConfigVersionResponseDto')).toEqual({ all: versionKeys, required: versionKeys });
    expect(listSchemaOf('/v1/configs')).toEqual({ $ref: '#/components/schemas/ConfigListResponseDto' });
    expect(listSchemaOf('/v1/configs/{idOrSlug}/versions')).toEqual({ $ref: '#/components/schemas/ConfigVersionListResponseDto' });
  });

  it("PromptResponseDto and PromptVersionResponseDto: PromptsService's keys, the template's optional fields optional", async () => {
    const minimal = { model: 'm', messages: [] };
    const full = { ...minimal, virtual_key: 'v', provider: 'p', variables: {}, hyperparameters: {} };
    const answers = async (template: object) => {
      const row = Object.assign(new PromptEntity(), { slug: 'p', template, version: 1, createdAt: new Date(), updatedAt: new Date() });
      const version = Object.assign(new PromptVersionEntity(), { version: 1, name: 'p', template, createdAt: new Date() });
      const config = { get: () => 1000 } as unknown as ConfigService<Environment, true>;
      const changes = { onChange: () => undefined } as unknown as KeyChangeNotifier;
      const service = new PromptsService(repoOf(row, [version]), {} as ProviderRegistry, changes, workspaces, config);
      return {
        prompt: Object.keys(await service.get(scope, 'p')).sort(),
        version: Object.keys((await service.versions(scope, 'p', 50)).data[0]).sort(),
      };
    };
    const always = await answers(minimal);
    const every = await answers(full);

    expect(propertiesOf('PromptResponseDto')).toEqual({ all: every.prompt, required: always.prompt });
    expect(propertiesOf('PromptVersionResponseDto')).toEqual({ all: every.version, required: always.version });
    expect(listSchemaOf('/v1/prompts')).toEqual({ $ref: '#/components/schemas/PromptListResponseDto' });
    expect(listSchemaOf('/v1/prompts/{idOrSlug}/versions')).toEqual({ $ref: '#/components/schemas/PromptVersionListResponseDto' });
  });

  it("WorkspaceResponseDto: the keys of WorkspacesService's answer, all required", async () => {
    const row = Object.assign(new WorkspaceEntity(), { slug: 'w', budgetLimitUsd: null, budgetPeriod: null, createdAt: new Date(), updatedAt: new Date() });
    const service = new WorkspacesService({} as Repository<WorkspaceEntity>, {} as KeyChangeNotifier, spend);
    const keys = Object.keys(await service['toResponse'](row)).sort();

    expect(propertiesOf('WorkspaceResponseDto')).toEqual({ all: keys, required: keys });
    expect(listSchemaOf('/v1/workspaces')).toEqual({ $ref: '#/components/schemas/WorkspaceListResponseDto' });
  });

  it("EndUserResponseDto: the keys of EndUsersService's answer, all required", async () => {
    const row = Object.assign(new EndUserEntity(), {
      user: 'u',
      metadata: {},
      budgetLimitUsd: null,
      budgetPeriod: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    const service = new EndUsersService({} as Repository<EndUserEntity>, {} as KeyChangeNotifier, spend, workspaces);
    const keys = Object.keys(await service['toResponse'](row)).sort();

    expect(propertiesOf('EndUserResponseDto')).toEqual({ all: keys, required: keys });
    expect(listSchemaOf('/v1/end-users')).toEqual({ $ref: '#/components/schemas/EndUserListResponseDto' });
  });

  it("McpServerResponseDto and its tools: the keys of McpServersService's answers, all required", async () => {
    const row = Object.assign(new McpServerEntity(), { slug: 's', headers: {}, allowedTools: null, createdAt: new Date(), updatedAt: new Date() });
    const registry = { find: () => Promise.resolve({}) } as unknown as McpRegistry;
    const pool = { tools: () => Promise.resolve([{ name: 't' }]) } as unknown as McpClientPool;
    const repo = { findOneBy: () => Promise.resolve(row), findOne: () => Promise.resolve(row) } as unknown as Repository<McpServerEntity>;
    const service = new McpServersService(repo, {} as SecretBox, {} as KeyChangeNotifier, registry, workspaces, pool);
    const keys = Object.keys(await service['toResponse'](row)).sort();
    const tools = await service.tools(scope, 's');
    const toolKeys = Object.keys(tools.data[0]).sort();

    expect(propertiesOf('McpServerResponseDto')).toEqual({ all: keys, required: keys });
    expect(propertiesOf('McpServerToolResponseDto')).toEqual({ all: toolKeys, required: toolKeys });
    expect(propertiesOf('McpServerToolListResponseDto')).toEqual({ all: Object.keys(tools).sort(), required: Object.keys(tools).sort() });
    expect(listSchemaOf('/v1/mcp-servers')).toEqual({ $ref: '#/components/schemas/McpServerListResponseDto' });
  });

  it("AuditLogEntryResponseDto: the keys of an audit entry's answer, all required", () => {
    const row = Object.assign(new AuditLogEntity(), { id: 'a', createdAt: new Date(), workspaceId: null, actorKind: 'api_key', actorId: 'k', actorName: 'n' });
    const keys = Object.keys(auditEntryResponse(Object.assign(row, { action: 'update', resource: 'api_key', resourceId: 'x', before: {}, after: {} }))).sort();
    expect(propertiesOf('AuditLogEntryResponseDto')).toEqual({ all: keys, required: keys });
  });

  it("PriceEntryResponseDto: an override's keys required, with every rate; the catalog's names and image prices optional", () => {
    const row = { provider: 'openai', model: 'm', created_at: new Date(), updated_at: new Date(), ...Object.fromEntries(PRICE_FIELDS.map((f) => [f, null])) };
    const keys = Object.keys(overrideEntry(row)).sort();
    const optional = ['catalog_provider', 'catalog_model', 'per_image_by_quality_and_size', 'created_at', 'updated_at'];
    expect(propertiesOf('PriceEntryResponseDto')).toEqual({
      all: [...new Set([...keys, ...optional])].sort(),
      required: keys.filter((key) => !optional.includes(key)).sort(),
    });
  });

  it("BatchAnalyticsResponseDto and its list: the keys of BatchAnalyticsService's answers, all required", async () => {
    const at = new Date();
    const batch = {
      id: 'batch_0',
      shape: 'openai' as const,
      endpoint: '/v1/chat/completions',
      status: 'completed' as const,
      mode: 'gateway' as const,
      provider: null,
      completion_window: '24h',
      created_at: at,
      in_progress_at: at,
      cancelling_at: null,
      ended_at: at,
      expires_at: at,
      api_key_id: 'k',
      api_key_name: 'n',
      total: 1,
      input_file_id: null,
      output_file_id: null,
      error_file_id: null,
      metadata: null,
      errors: null,
      provider_progress: null,
      created_us: '0',
    };
    const lines = { pending: 0, sending: 0, succeeded: 1, failed: 0, errored: 0, expired: 0, cancelled: 0 };
    const answer = toBatchResponse(batch, lines, { prompt_tokens: 1, completion_tokens: 1, cost_usd: null, unpriced_requests: 1 });
    const keys = Object.keys(answer).sort();
    const lineKeys = Object.keys(answer.lines as object).sort();
    expect(propertiesOf('BatchAnalyticsResponseDto')).toEqual({ all: keys, required: keys });
    expect(propertiesOf('BatchLinesResponseDto')).toEqual({ all: lineKeys, required: lineKeys });

    const db = { query: (sql: string) => Promise.resolve(sql.includes('from batches') ? [batch] : []) } as unknown as DataSource;
    const list = await new BatchAnalyticsService(db).list({ ...scope, caller: { role: 'admin' } } as WorkspaceScope, { limit: 50 });
    const listKeys = Object.keys(list).sort();
    expect(propertiesOf('BatchAnalyticsListResponseDto')).toEqual({ all: listKeys, required: listKeys });
    expect(Object.keys((list.data as object[])[0]).sort()).toEqual(keys);
    expect(listSchemaOf('/v1/analytics/batches')).toEqual({ $ref: '#/components/schemas/BatchAnalyticsListResponseDto' });
  });

  it("SessionResponseDto: the keys of an API-key session and a person's, all required", async () => {
    const sessions = {
      findByValue: () => Promise.resolve({ facts: { apiKeyHash: 'h', expiresAt: new Date() }, token: 't' }),
      csrfTokenOf: () => 'csrf',
      principalOf: () => Promise.resolve({ id: 'k', name: 'n', role: 'admin', workspaceId: 'w' }),
    };
    const auth = Object.create(AuthService.prototype) as AuthService;
    Object.assign(auth, { sessions, keyWorkspaces: () => Promise.resolve([]) });
    const keys = Object.keys((await auth.view('cookie'))!).sort();
    expect(propertiesOf('SessionResponseDto')).toEqual({ all: keys, required: keys });
  });
});
