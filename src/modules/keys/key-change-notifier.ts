import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import { KeyLookupService } from './key-lookup.service';

const CHANNEL = 'gateway_key_changes';
export type KeyKind = 'api_keys' | 'virtual_keys' | 'configs' | 'prompts' | 'end_users' | 'prices' | 'mcp_servers' | 'workspaces' | 'sessions';

/**
 * Tells every gateway instance on the same database that keys changed (PostgreSQL
 * LISTEN/NOTIFY), so a revoked key stops working everywhere at once rather than when
 * the cache entry expires. If the listener is down, KEY_CACHE_TTL_MS still bounds it.
 */
@Injectable()
export class KeyChangeNotifier implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(KeyChangeNotifier.name);
  private listener?: Client;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  /** Caches outside the keys module (prompt templates) that drop their entries on a change. */
  private readonly listeners = new Map<KeyKind, ((resync: boolean) => void)[]>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly lookup: KeyLookupService,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.listen().catch((error: Error) => this.retryLater(error));
  }

  /**
   * Calls `listener` whenever `kind` changes, here or on another instance; with
   * `resync` true after the listener reconnected (changes may have been missed: reload,
   * but keep what is known as the fallback, as KeyLookupService.expireAll does).
   */
  onChange(kind: KeyKind, listener: (resync: boolean) => void): void {
    this.listeners.set(kind, [...(this.listeners.get(kind) ?? []), listener]);
  }

  /** Invalidates here at once, and on the other instances through the database. */
  async changed(kind: KeyKind): Promise<void> {
    this.invalidate(kind);
    await this.dataSource.query('select pg_notify($1, $2)', [CHANNEL, kind]).catch((error: Error) => {
      this.logger.warn(`Could not notify other instances of a ${kind} change: ${error.message}`);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.config.get('DATABASE_URL', { infer: true }) });
    client.on('notification', (message) => this.invalidate(message.payload as KeyKind));
    client.on('error', (error) => this.retryLater(error));
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    this.listener = client;
  }

  private retryLater(error: Error): void {
    if (this.stopped) return;
    this.logger.warn(`Key change listener down (${error.message}); retrying in 5 s`);
    void this.listener?.end().catch(() => undefined);
    this.listener = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.listen().then(
        // Changes may have been missed while disconnected: everything is read again, but what
        // is known stays the fallback (a new outage must not turn keys already seen into 503s).
        () => {
          this.lookup.expireAll();
          for (const listener of [...this.listeners.values()].flat()) listener(true);
        },
        (e: Error) => this.retryLater(e),
      );
    }, 5_000);
    this.retryTimer.unref();
  }

  private invalidate(kind: KeyKind): void {
    if (kind === 'api_keys') this.lookup.invalidateApiKeys();
    else if (kind === 'virtual_keys') this.lookup.invalidateVirtualKeys();
    else if (kind === 'configs') this.lookup.invalidateConfigs();
    else if (kind === 'end_users') this.lookup.invalidateEndUsers();
    for (const listener of this.listeners.get(kind) ?? []) listener(false);
  }
}
