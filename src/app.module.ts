import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CryptoModule } from './common/crypto/crypto.module';
import { GatewayExceptionFilter } from './gateway/gateway-exception.filter';
import { ApiKeyGuard } from './gateway/api-key.guard';
import { GatewayValidationPipe } from './common/pipes/gateway-validation.pipe';
import type { Environment } from './config/environment';
import { dataSourceOptions } from './database/data-source-options';
import { AudioModule } from './modules/audio/audio.module';
import { AuditModule } from './modules/audit/audit.module';
import { AuthModule } from './modules/auth/auth.module';
import { BudgetsModule } from './modules/budgets/budgets.module';
import { ChatModule } from './modules/chat/chat.module';
import { DashboardModule } from './modules/dashboard/dashboard.module';
import { EmbeddingsModule } from './modules/embeddings/embeddings.module';
import { BatchesModule } from './modules/batches/batches.module';
import { FilesModule } from './modules/files/files.module';
import { FineTuningModule } from './modules/fine-tuning/fine-tuning.module';
import { HealthModule } from './modules/health/health.module';
import { ImagesModule } from './modules/images/images.module';
import { KeysModule } from './modules/keys/keys.module';
import { LoggingModule } from './modules/logging/logging.module';
import { McpModule } from './modules/mcp/mcp.module';
import { MessagesModule } from './modules/messages/messages.module';
import { GeminiModule } from './modules/gemini/gemini.module';
import { RealtimeModule } from './modules/realtime/realtime.module';
import { RerankModule } from './modules/rerank/rerank.module';
import { PromptsModule } from './modules/prompts/prompts.module';
import { ResponsesModule } from './modules/responses/responses.module';
import { TelemetryModule } from './modules/telemetry/telemetry.module';
import { UpstreamModule } from './modules/upstream/upstream.module';

/**
 * The gateway. `env` is the validated environment, with the database URL and the
 * encryption key already resolved (embedded PostgreSQL, generated key) by `main.ts`.
 */
@Module({})
export class AppModule {
  static forRoot(env: Environment): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, skipProcessEnv: true, load: [() => ({ ...env })] }),
        TypeOrmModule.forRoot({ ...dataSourceOptions(env.DATABASE_URL!, env.GATEWAY_ENCRYPTION_KEY), migrationsRun: true }),
        // Express matches routes in registration order: model operations first, they are the hot path.
        ChatModule,
        EmbeddingsModule,
        RerankModule,
        ImagesModule,
        FineTuningModule,
        FilesModule,
        BatchesModule,
        AudioModule,
        RealtimeModule,
        ResponsesModule,
        MessagesModule,
        GeminiModule,
        PromptsModule,
        CryptoModule,
        UpstreamModule,
        LoggingModule,
        TelemetryModule,
        BudgetsModule,
        KeysModule,
        AuthModule,
        McpModule,
        AuditModule,
        DashboardModule,
        HealthModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: GatewayExceptionFilter },
        { provide: APP_PIPE, useClass: GatewayValidationPipe },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
      ],
    };
  }
}
