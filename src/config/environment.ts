import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';
import { toBool, toInt, toNumber } from '../common/query-transforms';
import { certificateAuthorities } from './certificate-authorities';
import { parseRoleMapping } from './role-mapping';

/**
 * Every environment variable the gateway reads, parsed once at start-up.
 * A bad value stops the process with a message naming each bad variable.
 */
export class Environment {
  @IsIn(['development', 'production', 'test'])
  @IsOptional()
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 8787;

  @IsString()
  HOST = '0.0.0.0';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  /** Folder for the embedded PostgreSQL cluster and the generated encryption key. */
  @IsString()
  DATA_DIR = './data';

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'GATEWAY_ADMIN_KEY must be at least 16 characters' })
  GATEWAY_ADMIN_KEY?: string;

  /** 32 bytes as 64 hex characters or base64; encrypts stored provider credentials. */
  @IsOptional()
  @Matches(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
    message: 'GATEWAY_ENCRYPTION_KEY must be 32 bytes as 64 hex characters or 44 base64 characters',
  })
  GATEWAY_ENCRYPTION_KEY?: string;

  /** Largest accepted request body, in bytes (default 10 MiB). */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 10 * 1024 * 1024;

  /** Largest multipart upload (files, audio to transcribe), in bytes (default 512 MiB, OpenAI's file limit). Streamed, never held whole. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  UPLOAD_LIMIT_BYTES = 512 * 1024 * 1024;

  /** Largest batch input file the gateway keeps (`purpose: "batch"`), in bytes (default 100 MiB; it is read whole when its batch is created). */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  BATCH_FILE_LIMIT_BYTES = 100 * 1024 * 1024;

  /** Lines of one gateway-run batch in flight at once, over every instance (CONTRACT section 17). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(256)
  BATCH_CONCURRENCY = 8;

  /** How often each instance looks for batch lines to send and batches to finish, in ms. */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  BATCH_POLL_MS = 1000;

  /** How long a batch line being sent stays leased to its instance without a renewal (renewed every tick): past it, the instance is taken for gone. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  BATCH_LEASE_SECONDS = 60;

  /** Over this share of the last tick busy, an instance sends one line of a batch at a time (interactive requests first); 1: never. */
  @Transform(toNumber)
  @IsNumber()
  @Min(0.1)
  @Max(1)
  BATCH_YIELD_UTILIZATION = 0.6;

  /** How often a batch running at its provider (OpenAI, Azure OpenAI, Anthropic) is polled there, in ms (one instance polls each). */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  BATCH_NATIVE_POLL_MS = 30_000;

  /** Store request and response bodies in the log. */
  @Transform(toBool)
  @IsBoolean()
  LOG_BODIES = true;

  /**
   * Move the log rows written before bodies were stored as parts (their bodies whole) to
   * parts, in the background: small batches, one instance at a time, at start-up and then
   * hourly until none is left (LogBodyBackfill). `false`: they stay whole (and read as before).
   */
  @Transform(toBool)
  @IsBoolean()
  LOG_BODY_BACKFILL = true;

  /**
   * Where the parts of logged bodies live (CONTRACT section 14): unset keeps them in
   * PostgreSQL; `s3://bucket/prefix` keeps them in an S3-compatible object store and only
   * their references (and search words) in PostgreSQL. Credentials and region come from
   * the AWS SDK's usual chain (AWS_REGION, AWS_ACCESS_KEY_ID, profiles, instance roles).
   */
  @IsOptional()
  @Matches(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[A-Za-z0-9!_.*'()/-]*)?$/, {
    message:
      "LOG_BODY_STORE must be s3://bucket or s3://bucket/prefix (a bucket name of 3-63 lowercase letters, digits, dots and hyphens; a prefix of letters, digits and !_.*'()/-)",
  })
  LOG_BODY_STORE?: string;

  /** The S3-compatible server of LOG_BODY_STORE (MinIO, R2, GCS interoperability…); addressed path-style. Unset: AWS S3. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/@]+(\/\S*)?$/, { message: 'LOG_BODY_STORE_ENDPOINT must be an http:// or https:// URL without user:password@' })
  LOG_BODY_STORE_ENDPOINT?: string;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** Rows per INSERT (at most 2000: PostgreSQL allows 65535 parameters per statement). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(2000)
  LOG_BATCH_SIZE = 200;

  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(60000)
  LOG_FLUSH_INTERVAL_MS = 250;

  /**
   * How often queued log rows are compacted into the analytics rollups (LogRollupCompactor).
   * Every second: the same work as every 5 s, in bursts small enough not to be felt by
   * requests when PostgreSQL shares the gateway's core (npm run bench -- --pin).
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600000)
  ROLLUP_COMPACT_INTERVAL_MS = 1000;

  /** Upper bound on log records held in memory while the database is unreachable (the journal keeps the rest). */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  LOG_QUEUE_MAX = 100000;

  /**
   * Where log records are journaled until they are in the database, so that a database
   * outage or a crash loses none (replayed at start); `off` disables. Default DATA_DIR/journal.
   */
  @IsOptional()
  @IsString()
  LOG_JOURNAL_DIR?: string;

  /** Upper bound on the journal's size on disk; records beyond it are held in memory only. */
  @Transform(toInt)
  @IsInt()
  @Min(1024 * 1024)
  LOG_JOURNAL_MAX_BYTES = 1024 * 1024 * 1024;

  /** How long keys, virtual keys and configs stay in the in-process cache. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  KEY_CACHE_TTL_MS = 60000;

  /** Default upstream timeout when no config sets request_timeout. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  UPSTREAM_TIMEOUT_MS = 600000;

  /** Largest non-streamed provider answer the gateway reads (default 64 MiB); beyond it, 502. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  UPSTREAM_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

  /**
   * Connections to one provider origin at once; 0 (the default): no limit, one per open
   * request, so thousands of streams are never held back in the gateway. Past a limit,
   * requests wait for a free connection: `gateway_upstream_waiting_requests` and a warning say so.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  UPSTREAM_MAX_CONNECTIONS = 0;

  /**
   * HTTP/2 to providers that offer it (TLS origins whose ALPN picks h2): hundreds of open
   * streams share one connection instead of a connection (and a file descriptor) each.
   * Origins that answer HTTP/1.1, and `http:` ones, stay on HTTP/1.1.
   */
  @Transform(toBool)
  @IsBoolean()
  UPSTREAM_HTTP2 = true;

  /** A PEM file of certificate authorities trusted for provider connections besides the system's (a self-hosted model server behind an internal CA). */
  @IsOptional()
  @IsString()
  UPSTREAM_CA_FILE?: string;

  /** First retry delay of a config's `retry`; doubles per attempt, with jitter. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  RETRY_BASE_DELAY_MS = 200;

  /** Longest wait between two retries; a provider's Retry-After beyond it ends the retries of that target. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  RETRY_MAX_DELAY_MS = 10000;

  /** Redis for the response cache (and shared counters); unset: PostgreSQL holds them. */
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** Larger responses are served but not cached. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  CACHE_MAX_ENTRY_BYTES = 1024 * 1024;

  /**
   * Let provider hosts (custom_host, virtual keys) resolve to private addresses: 10/8,
   * 172.16/12, 192.168/16, loopback, CGNAT, fc00::/7; e.g. a self-hosted vLLM or Ollama.
   * Link-local and cloud metadata addresses stay unreachable regardless.
   */
  @Transform(toBool)
  @IsBoolean()
  UPSTREAM_ALLOW_PRIVATE_NETWORKS = false;

  /** Comma-separated CIDRs (or addresses) provider hosts may resolve to even when private, e.g. `10.0.3.0/24,127.0.0.1`. */
  @IsOptional()
  @Matches(/^\s*[0-9a-fA-F:.]+(\/\d{1,3})?(\s*,\s*[0-9a-fA-F:.]+(\/\d{1,3})?)*\s*$/, {
    message: 'UPSTREAM_ALLOWED_NETWORKS must be comma-separated addresses or CIDRs',
  })
  UPSTREAM_ALLOWED_NETWORKS?: string;

  /** How long SIGTERM waits for open requests and streams before closing them (under Kubernetes' default 30 s grace period). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_GRACE_MS = 25000;

  /** After SIGTERM, how long new requests are still served while /health/ready says 503 (load balancers notice). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_DELAY_MS = 5000;

  /** A connection that has not sent a whole request head (its headers) this long after it opened, or after its request began, is closed (408). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SERVER_HEADERS_TIMEOUT_MS = 30000;

  /** A request whose body has not been fully received this long after it began is closed (408). The answer's time does not count. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SERVER_REQUEST_TIMEOUT_MS = 300000;

  /** A keep-alive connection idle this long between requests is closed (above the usual load balancer's 60 s, so the balancer closes first). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SERVER_KEEPALIVE_TIMEOUT_MS = 65000;

  /** Bytes of a stream the gateway holds for a client that reads slower than the provider writes; past it, the provider is read no faster than the client reads. */
  @Transform(toInt)
  @IsInt()
  @Min(16 * 1024)
  STREAM_CLIENT_BUFFER_BYTES = 1024 * 1024;

  /** A streaming client that is behind and reads nothing this long is disconnected (logged 499). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  STREAM_CLIENT_IDLE_MS = 60000;

  /** Worker processes on one port: a number, or `auto` for one per core. */
  @Matches(/^(auto|[1-9]\d{0,2})$/, { message: 'WORKERS must be a number of processes (1-999) or auto' })
  WORKERS = '1';

  /** Days of request log rows kept (whole days: old partitions are dropped); unset: kept forever. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  LOG_RETENTION_DAYS?: number;

  /** Days of analytics rollups kept (longer than the log, usually); unset: kept forever. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  ROLLUP_RETENTION_DAYS?: number;

  /** OTLP/HTTP endpoint (e.g. `http://otel-collector:4318`); set: one trace per request is exported. */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** Set: `GET /metrics` needs `Authorization: Bearer <this>` (401 otherwise). Neither this nor METRICS_PORT: /metrics answers 404. */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  METRICS_TOKEN?: string;

  /** Set: /metrics is served on this port only (its own listener on METRICS_HOST; the main port answers 404). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(65535)
  METRICS_PORT?: number;

  /** Where the METRICS_PORT listener binds: loopback by default, so only the machine (or the pod) reads it. */
  @IsString()
  @MinLength(1)
  METRICS_HOST = '127.0.0.1';

  /** `false`: no OpenAPI document or UI at /docs and /docs-json. */
  @Transform(toBool)
  @IsBoolean()
  DOCS_ENABLED = true;

  /** The service name traces carry. */
  @IsString()
  @MinLength(1)
  OTEL_SERVICE_NAME = 'ai-gateway';

  /** Comma-separated CIDRs (or addresses) a registered MCP server may resolve to even when private (link-local and metadata addresses never). */
  @IsOptional()
  @Matches(/^\s*[0-9a-fA-F:.]+(\/\d{1,3})?(\s*,\s*[0-9a-fA-F:.]+(\/\d{1,3})?)*\s*$/, {
    message: 'MCP_ALLOWED_NETWORKS must be comma-separated addresses or CIDRs',
  })
  MCP_ALLOWED_NETWORKS?: string;

  /** How long one MCP request (connect, tools/list, tools/call) may take before it becomes an error result. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MCP_TIMEOUT_MS = 30000;

  /** Model rounds of a gateway-run tool loop (`x-gateway-mcp`) before it stops with an error. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MCP_MAX_TURNS = 8;

  /** OpenID Connect sign-in to the dashboard (README, "Single sign-on"): the identity provider's issuer URL. */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OIDC_ISSUER_URL must be an http(s) URL (the issuer, e.g. https://login.example.com/realms/acme)' })
  OIDC_ISSUER_URL?: string;

  @IsOptional()
  @IsString()
  OIDC_CLIENT_ID?: string;

  @IsOptional()
  @IsString()
  OIDC_CLIENT_SECRET?: string;

  /** Where the provider sends people back; default: the request's own `{base}/auth/callback`. */
  @IsOptional()
  @Matches(/^https?:\/\/\S+\/auth\/callback$/, { message: 'OIDC_REDIRECT_URI must be an http(s) URL ending in /auth/callback' })
  OIDC_REDIRECT_URI?: string;

  /** The ID token or userinfo claim that lists a person's groups. */
  @IsString()
  @MinLength(1)
  OIDC_GROUPS_CLAIM = 'groups';

  /** JSON: group → `{"workspace": slug, "role": owner|admin|member|viewer}` (role-mapping.ts). */
  @IsOptional()
  @IsString()
  OIDC_ROLE_MAPPING?: string;

  /** Scopes asked of the provider (space-separated; `openid` is required). */
  @Matches(/(^|\s)openid(\s|$)/, { message: 'OIDC_SCOPES must include openid' })
  OIDC_SCOPES = 'openid email profile';

  /** How long a dashboard session (SSO or API-key sign-in) lasts. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(24 * 90)
  SESSION_TTL_HOURS = 12;
}

export class InvalidEnvironmentError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment:\n  - ${problems.join('\n  - ')}`);
  }
}

/** Parses and validates the environment; throws one error listing every bad variable. */
export function validateEnvironment(raw: Record<string, unknown>): Environment {
  const known = Object.keys(new Environment()).concat(
    'DATABASE_URL',
    'GATEWAY_ADMIN_KEY',
    'GATEWAY_ENCRYPTION_KEY',
    'REDIS_URL',
    'LOG_JOURNAL_DIR',
    'UPSTREAM_ALLOWED_NETWORKS',
    'MCP_ALLOWED_NETWORKS',
    'LOG_RETENTION_DAYS',
    'ROLLUP_RETENTION_DAYS',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OIDC_ISSUER_URL',
    'OIDC_CLIENT_ID',
    'OIDC_CLIENT_SECRET',
    'OIDC_REDIRECT_URI',
    'OIDC_ROLE_MAPPING',
    'UPSTREAM_CA_FILE',
    'METRICS_TOKEN',
    'METRICS_PORT',
    'LOG_BODY_STORE',
    'LOG_BODY_STORE_ENDPOINT',
  );
  // Empty strings mean "unset", as in most twelve-factor apps.
  const input = Object.fromEntries(known.filter((k) => raw[k] !== undefined && raw[k] !== '').map((k) => [k, raw[k]]));
  const env = plainToInstance(Environment, input, { exposeDefaultValues: true });
  const problems = validateSync(env, { skipMissingProperties: false }).flatMap((e) => Object.values(e.constraints ?? {}).map((m) => `${e.property}: ${m}`));
  if (env.DATABASE_URL && !env.GATEWAY_ENCRYPTION_KEY) {
    problems.push('GATEWAY_ENCRYPTION_KEY: required when DATABASE_URL is set (the key must be the same on every instance)');
  }
  problems.push(...oidcProblems(env));
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT)
    problems.push('METRICS_PORT: must differ from PORT (metrics get a listener of their own)');
  if (env.SERVER_HEADERS_TIMEOUT_MS > env.SERVER_REQUEST_TIMEOUT_MS)
    problems.push('SERVER_HEADERS_TIMEOUT_MS: must not be above SERVER_REQUEST_TIMEOUT_MS (the headers are part of the request)');
  try {
    certificateAuthorities(env.UPSTREAM_CA_FILE);
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (problems.length) throw new InvalidEnvironmentError(problems);
  return env;
}

/** Sign-in with OpenID Connect needs its three variables together, and a mapping that parses. */
function oidcProblems(env: Environment): string[] {
  const set = [env.OIDC_ISSUER_URL, env.OIDC_CLIENT_ID, env.OIDC_CLIENT_SECRET].filter((v) => v !== undefined).length;
  const problems: string[] = [];
  if (set !== 0 && set !== 3) problems.push('OIDC_ISSUER_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: set all three to enable single sign-on, or none');
  if (env.OIDC_ROLE_MAPPING !== undefined) {
    try {
      parseRoleMapping(env.OIDC_ROLE_MAPPING);
    } catch (error) {
      problems.push(`OIDC_ROLE_MAPPING: ${(error as Error).message}`);
    }
  }
  return problems;
}
