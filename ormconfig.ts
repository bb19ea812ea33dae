// The data source used by the TypeORM migration CLI (`npm run migration:run`).
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

if (!process.env.DATABASE_URL) {
  throw new Error('Set DATABASE_URL to run migrations from the CLI (the gateway runs them itself at start-up)');
}

export default new DataSource(dataSourceOptions(process.env.DATABASE_URL, process.env.GATEWAY_ENCRYPTION_KEY));
