import { registerDecorator, ValidateIf } from 'class-validator';

/**
 * The field may be left out, but not sent as `null`: unlike `@IsOptional()`, a null still
 * meets the field's other validators (and so gets "name must be a string", not a
 * null reaching a service that has no meaning for it). Fields where null means
 * "clear it" keep `@IsOptional()`.
 */
export const Omittable = () => ValidateIf((_object, value) => value !== undefined);

/**
 * A number with at most `places` digits after the decimal point, for any notation
 * (class-validator's `maxDecimalPlaces` reads `String(1e-7)` as "1e-7" and throws).
 */
export function MaxDecimalPlaces(places: number) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'maxDecimalPlaces',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value * 10 ** places - Math.round(value * 10 ** places)) < 1e-6,
        defaultMessage: () => `${propertyName} must have at most ${places} decimal places`,
      },
    });
}
