import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isInt, isNotEmpty, isNumber, isObject, isString, Rule } from '../../../common/pipes/body-rules';

/** At most 5 integrations per job (the spec's limit). */
export const MAX_INTEGRATIONS = 5;

/** `"auto"`, or what `rule` accepts (`described` in the message). */
const autoOr =
  (rule: Rule, described: string): Rule =>
  (v, f) =>
    v === 'auto' || rule(v, f) === null ? null : `${f} must be "auto" or ${described}`;

const HYPERPARAMETERS: Record<string, Rule> = {
  n_epochs: autoOr(isInt(1, 50), 'an integer from 1 to 50'),
  batch_size: autoOr(isInt(1, 256), 'an integer from 1 to 256'),
  learning_rate_multiplier: autoOr(isNumber(Number.MIN_VALUE, 1000), 'a number above 0'),
};

const hyperparameters: Rule = (v, f) => {
  const notObject = isObject(v, f);
  if (notObject) return notObject;
  for (const [name, rule] of Object.entries(HYPERPARAMETERS)) {
    const value = (v as Record<string, unknown>)[name];
    const problem = value === undefined ? null : rule(value, `${f}.${name}`);
    if (problem) return problem;
  }
  return null;
};

/**
 * An integration: `{type, <type>: {project, name?, entity?, tags?}}`, the settings under
 * a member named by its type (e.g. the experiment tracker's).
 */
const integration: Rule = (v, f) => {
  const notObject = isObject(v, f);
  if (notObject) return notObject;
  const item = v as Record<string, unknown>;
  const type = item.type;
  const badType = all(isString(64), isNotEmpty)(type, `${f}.type`);
  if (badType) return badType;
  const settings = item[type as string];
  const where = `${f}.${type as string}`;
  const notSettings = isObject(settings, where);
  if (notSettings) return `${notSettings} (the settings of an integration are under a member named by its type)`;
  const fields = settings as Record<string, unknown>;
  const problems = [
    all(isString(), isNotEmpty)(fields.project, `${where}.project`),
    fields.name === undefined || fields.name === null ? null : isString()(fields.name, `${where}.name`),
    fields.entity === undefined || fields.entity === null ? null : isString()(fields.entity, `${where}.entity`),
    fields.tags === undefined
      ? null
      : (isArray(0, 50)(fields.tags, `${where}.tags`) ??
        ((fields.tags as unknown[]).some((tag) => typeof tag !== 'string') ? `${where}.tags must contain strings only` : null)),
  ];
  return problems.find((problem) => problem !== null) ?? null;
};

const integrations: Rule = (v, f) => {
  const notArray = isArray(0, MAX_INTEGRATIONS)(v, f);
  if (notArray) return notArray;
  for (const [index, item] of (v as unknown[]).entries()) {
    const problem = integration(item, `${f}[${index}]`);
    if (problem) return problem;
  }
  return null;
};

export const FINE_TUNING_JOB_SCHEMA = {
  required: {
    model: all(isString(256), isNotEmpty),
    training_file: all(isString(256), isNotEmpty),
  },
  optional: {
    validation_file: isString(256),
    hyperparameters,
    suffix: isString(64),
    seed: isInt(0, 2_147_483_647),
    integrations,
    method: isObject,
    metadata: isObject,
  },
};

/** `POST /v1/fine_tuning/jobs` (OpenAI's format). The OpenAPI description; the checks are FINE_TUNING_JOB_SCHEMA; other fields pass through. */
export class FineTuningJobCreateDto {
  [extra: string]: unknown;

  /** Called by GatewayValidationPipe instead of class-validator. */
  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, FINE_TUNING_JOB_SCHEMA);
  }

  @ApiProperty({ example: 'gpt-4o-mini-2024-07-18', description: 'Base model, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({ example: 'file-abc123', description: 'ID of the uploaded training file' })
  training_file: string;

  @ApiPropertyOptional({ example: 'file-def456' })
  validation_file?: string;

  @ApiPropertyOptional({ example: { n_epochs: 'auto' }, description: 'n_epochs, batch_size, learning_rate_multiplier: a number or "auto"' })
  hyperparameters?: Record<string, unknown>;

  @ApiPropertyOptional({ maxLength: 64 })
  suffix?: string;

  @ApiPropertyOptional()
  seed?: number;

  @ApiPropertyOptional({
    maxItems: MAX_INTEGRATIONS,
    example: [{ type: 'wandb', wandb: { project: 'my-project', tags: ['first'] } }],
    description: 'At most 5; the settings under a member named by the type',
  })
  integrations?: Record<string, unknown>[];
}
