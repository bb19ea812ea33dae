import { registerDecorator } from 'class-validator';

/** An object whose values are all strings (at most 32 keys, values up to 128 characters). */
export function IsStringRecord() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isStringRecord',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          Object.keys(value).length <= 32 &&
          Object.values(value).every((v) => typeof v === 'string' && v.length <= 128),
        defaultMessage: () => `${propertyName} must be an object of at most 32 string values of at most 128 characters`,
      },
    });
}
