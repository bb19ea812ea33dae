import { registerDecorator } from 'class-validator';
import { isSecretHint } from '../../../common/crypto/secret-box';
import { HEADER_VALUE_RULE, isHeaderValue } from '../../../common/http/header-value';

/**
 * A plain object (not an array) of at most `maxKeys` entries, each passing `entry`;
 * `message` names the rule in the 400.
 */
export function IsRecordOf(name: string, maxKeys: number, entry: (key: string, value: unknown) => boolean, message: (property: string) => string) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.keys(value).length <= maxKeys &&
          Object.entries(value).every(([key, v]) => entry(key, v)),
        defaultMessage: () => message(propertyName),
      },
    });
}

/** An object whose values are all strings (at most 32 keys, values up to 128 characters). */
export const IsStringRecord = () =>
  IsRecordOf(
    'isStringRecord',
    32,
    (_, v) => typeof v === 'string' && v.length <= 128,
    (property) => `${property} must be an object of at most 32 string values of at most 128 characters`,
  );

/** Azure's resource name becomes the host `{resource_name}.openai.azure.com`: a DNS label, nothing that could end the host early. */
const HOST_LABEL = /^[A-Za-z0-9-]{1,63}$/;

/** Why a virtual key's `provider_options` cannot be used, naming the option, or null. Their values end up in headers (`anthropic_beta`, `aws_session_token`) or a host. */
function providerOptionsProblem(property: string, options: unknown): string | null {
  if (typeof options !== 'object' || options === null) return null;
  for (const [name, value] of Object.entries(options)) {
    if (typeof value !== 'string') continue;
    // A secret option sent back as the hint a read showed keeps the stored secret (sealProviderOptions).
    if (!isHeaderValue(value) && !isSecretHint(value)) return `${property}.${name} ${HEADER_VALUE_RULE}`;
    if (name === 'resource_name' && !HOST_LABEL.test(value)) return `${property}.resource_name must be an Azure resource name (letters, digits and hyphens)`;
  }
  return null;
}

export function IsProviderOptions() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isProviderOptions',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => providerOptionsProblem(propertyName, value) === null,
        defaultMessage: (args) => providerOptionsProblem(propertyName, args?.value) ?? '',
      },
    });
}

/**
 * A provider credential: a service account's JSON (Vertex AI, exchanged for a token, never
 * sent as is), else a value that goes into a header (`Authorization`, `api-key`).
 */
export function IsProviderKey() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isProviderKey',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || value.trimStart().startsWith('{') || isHeaderValue(value),
        defaultMessage: () => `${propertyName} ${HEADER_VALUE_RULE}`,
      },
    });
}
