import { ConfigService } from '@nestjs/config';
import { InvalidEnvironmentError, validateEnvironment } from '../../../config/environment';
import { parseStoreLocation, PartStore } from './part-store';

describe('LOG_BODY_STORE', () => {
  it.each([
    ['s3://gateway-logs', { bucket: 'gateway-logs', prefix: '' }],
    ['s3://gateway-logs/', { bucket: 'gateway-logs', prefix: '' }],
    ['s3://gateway-logs/parts', { bucket: 'gateway-logs', prefix: 'parts/' }],
    ['s3://my.bucket-1/a/b/', { bucket: 'my.bucket-1', prefix: 'a/b/' }],
    ['s3://logs//deep//', { bucket: 'logs', prefix: 'deep/' }],
  ])('%s is bucket and prefix %j', (location, expected) => {
    expect(validateEnvironment({ LOG_BODY_STORE: location }).LOG_BODY_STORE).toBe(location);
    expect(parseStoreLocation(location)).toEqual(expected);
  });

  it.each(['http://bucket/prefix', 's3://', 's3://ab', 's3://Upper', 's3://bucket/with space', 's3://bucket/a\r\nb', 's3://-bucket', 's3://bucket/?query'])(
    'refuses %j at start-up',
    (location) => {
      expect(() => validateEnvironment({ LOG_BODY_STORE: location })).toThrow(InvalidEnvironmentError);
    },
  );

  it.each(['ftp://minio:9000', 'http://user:secret@minio:9000', 'minio:9000'])('refuses the endpoint %j', (endpoint) => {
    expect(() => validateEnvironment({ LOG_BODY_STORE: 's3://logs', LOG_BODY_STORE_ENDPOINT: endpoint })).toThrow(/LOG_BODY_STORE_ENDPOINT/);
  });

  it('unset: parts stay in PostgreSQL and the store does nothing', async () => {
    const store = new PartStore(new ConfigService(validateEnvironment({})));
    expect(store.inDatabase).toBe(true);
    await expect(store.put([{ workspaceId: 'w', hash: 'h', json: '{}' }])).resolves.toBeUndefined();
    await expect(store.get([['w', 'h']])).resolves.toEqual(new Map());
    await expect(store.delete([['w', 'h']])).resolves.toBeUndefined();
  });

  it('set: parts go to the object store', () => {
    const store = new PartStore(new ConfigService(validateEnvironment({ LOG_BODY_STORE: 's3://logs/p', LOG_BODY_STORE_ENDPOINT: 'http://127.0.0.1:9000' })));
    expect(store.inDatabase).toBe(false);
    store.onModuleDestroy();
  });
});
