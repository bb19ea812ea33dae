import { registerDecorator } from 'class-validator';

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
          typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length <= maxKeys && Object.entries(value).every(([key, v]) => entry(key, v)),
        defaultMessage: () => message(propertyName),
      },
    });
}

/** An object whose values are all strings (at most 32 keys, values up to 128 characters). */
export const IsStringRecord = () =>
  IsRecordOf('isStringRecord', 32, (_, v) => typeof v === 'string' && v.length <= 128, (property) => `${property} must be an object of at most 32 string values of at most 128 characters`);
