import { DataSourceOptions } from 'typeorm';
import { ApiKeyEntity } from '../modules/keys/entities/api-key.entity';
import { StoredConfigEntity } from '../modules/keys/entities/stored-config.entity';
import { VirtualKeyEntity } from '../modules/keys/entities/virtual-key.entity';
import { RequestLogEntity } from '../modules/logging/entities/request-log.entity';
import { InitialSchema1763773200000 } from './migrations/1763773200000-InitialSchema';

export const ENTITIES = [ApiKeyEntity, VirtualKeyEntity, StoredConfigEntity, RequestLogEntity];
export const MIGRATIONS = [InitialSchema1763773200000];

/** The one place the database connection is described: used by the app and by `ormconfig.ts`. */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 20, application_name: 'ai-gateway' },
  };
}
