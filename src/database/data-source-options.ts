import { DataSourceOptions } from 'typeorm';
import { ApiKeyEntity } from '../modules/keys/entities/api-key.entity';
import { ConfigVersionEntity } from '../modules/keys/entities/config-version.entity';
import { EndUserEntity } from '../modules/keys/entities/end-user.entity';
import { StoredConfigEntity } from '../modules/keys/entities/stored-config.entity';
import { VirtualKeyEntity } from '../modules/keys/entities/virtual-key.entity';
import { RequestLogEntity } from '../modules/logging/entities/request-log.entity';
import { McpServerEntity } from '../modules/mcp/entities/mcp-server.entity';
import { PromptVersionEntity } from '../modules/prompts/entities/prompt-version.entity';
import { PromptEntity } from '../modules/prompts/entities/prompt.entity';
import { WorkspaceEntity } from '../modules/workspaces/workspace.entity';
import { AuditLogEntity } from '../modules/audit/audit-log.entity';
import { SessionEntity } from '../modules/auth/entities/session.entity';
import { UserEntity } from '../modules/auth/entities/user.entity';
import { InitialSchema1763773200000 } from './migrations/1763773200000-InitialSchema';
import { ResponseCache1763900000000 } from './migrations/1763900000000-ResponseCache';
import { ConfigVersions1763900100000 } from './migrations/1763900100000-ConfigVersions';
import { Prompts1764000000000 } from './migrations/1764000000000-Prompts';
import { BudgetCounters1764000100000 } from './migrations/1764000100000-BudgetCounters';
import { RateCounters1764000200000 } from './migrations/1764000200000-RateCounters';
import { EndUsers1764000300000 } from './migrations/1764000300000-EndUsers';
import { LogIndexes1764000400000 } from './migrations/1764000400000-LogIndexes';
import { FineTuningCharges1764000500000 } from './migrations/1764000500000-FineTuningCharges';
import { LogGuardrails1764000600000 } from './migrations/1764000600000-LogGuardrails';
import { LogRollups1764000700000 } from './migrations/1764000700000-LogRollups';
import { LogIgnoredParams1764000810000 } from './migrations/1764000810000-LogIgnoredParams';
import { ApiKeyDefaults1764000900000 } from './migrations/1764000900000-ApiKeyDefaults';
import { PriceOverrides1764001000000 } from './migrations/1764001000000-PriceOverrides';
import { LogBilledUnits1764001100000 } from './migrations/1764001100000-LogBilledUnits';
import { LogToolCalls1764001400000 } from './migrations/1764001400000-LogToolCalls';
import { LogRollupsUnpriced1764001600000 } from './migrations/1764001600000-LogRollupsUnpriced';
import { Workspaces1764001700000 } from './migrations/1764001700000-Workspaces';
import { LogSearch1764002000000 } from './migrations/1764002000000-LogSearch';
import { KeysLastUsed1764002100000 } from './migrations/1764002100000-KeysLastUsed';
import { LogBodyPartDocuments1764002300000 } from './migrations/1764002300000-LogBodyPartDocuments';
import { LogBodyParts1764002200000 } from './migrations/1764002200000-LogBodyParts';
import { LogWholeBodies1764002400000 } from './migrations/1764002400000-LogWholeBodies';
import { LogSearchWords1764002500000 } from './migrations/1764002500000-LogSearchWords';
import { LogCacheWriteTokens1764002600000 } from './migrations/1764002600000-LogCacheWriteTokens';
import { LogRequestKinds1764002700000 } from './migrations/1764002700000-LogRequestKinds';
import { Batches1764002800000 } from './migrations/1764002800000-Batches';
import { NativeBatches1764002900000 } from './migrations/1764002900000-NativeBatches';
import { AuditLog1764001800000 } from './migrations/1764001800000-AuditLog';
import { UsersSessions1764001900000 } from './migrations/1764001900000-UsersSessions';
import { encryptProviderOptionSecretsMigration } from './migrations/1764001200000-EncryptProviderOptionSecrets';
import { McpServers1764001300000 } from './migrations/1764001300000-McpServers';
import { PartitionRequestLogs1764001500000 } from './migrations/1764001500000-PartitionRequestLogs';

export const ENTITIES = [
  ApiKeyEntity,
  VirtualKeyEntity,
  StoredConfigEntity,
  ConfigVersionEntity,
  EndUserEntity,
  PromptEntity,
  PromptVersionEntity,
  RequestLogEntity,
  McpServerEntity,
  WorkspaceEntity,
  AuditLogEntity,
  UserEntity,
  SessionEntity,
];
export const MIGRATIONS = [
  InitialSchema1763773200000,
  ResponseCache1763900000000,
  ConfigVersions1763900100000,
  Prompts1764000000000,
  BudgetCounters1764000100000,
  RateCounters1764000200000,
  EndUsers1764000300000,
  LogIndexes1764000400000,
  FineTuningCharges1764000500000,
  LogGuardrails1764000600000,
  LogRollups1764000700000,
  LogIgnoredParams1764000810000,
  ApiKeyDefaults1764000900000,
  PriceOverrides1764001000000,
  LogBilledUnits1764001100000,
  McpServers1764001300000,
  LogToolCalls1764001400000,
  PartitionRequestLogs1764001500000,
  LogRollupsUnpriced1764001600000,
  Workspaces1764001700000,
  AuditLog1764001800000,
  UsersSessions1764001900000,
  LogSearch1764002000000,
  KeysLastUsed1764002100000,
  LogBodyParts1764002200000,
  LogBodyPartDocuments1764002300000,
  LogWholeBodies1764002400000,
  LogSearchWords1764002500000,
  LogCacheWriteTokens1764002600000,
  LogRequestKinds1764002700000,
  Batches1764002800000,
  NativeBatches1764002900000,
];

/** Migrations, with those that re-encode stored secrets made with the gateway's encryption key. */
export function migrations(encryptionKey: string | undefined): DataSourceOptions['migrations'] {
  return [...MIGRATIONS, encryptProviderOptionSecretsMigration(encryptionKey)];
}

/**
 * The one place the database connection is described: used by the app and by `ormconfig.ts`.
 * `encryptionKey` (GATEWAY_ENCRYPTION_KEY) lets migrations encrypt secrets stored in clear before.
 */
export function dataSourceOptions(url: string, encryptionKey?: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: migrations(encryptionKey),
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 20, application_name: 'ai-gateway' },
  };
}
