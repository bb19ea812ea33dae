import { isISO8601, registerDecorator, ValidateIf } from 'class-validator';
import { HEADER_VALUE_RULE, isHeaderValue } from '../http/header-value';
import { hasUserinfo } from '../http/http-url';

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
        validate: (value: unknown) =>
          typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value * 10 ** places - Math.round(value * 10 ** places)) < 1e-6,
        defaultMessage: () => `${propertyName} must have at most ${places} decimal places`,
      },
    });
}

/**
 * An ISO 8601 date-time that is a real instant: a strict ISO check (no 30 February) and one
 * `Date` can hold (`@IsDateString()` lets through values such as year +275760, which
 * become an Invalid Date on their way to PostgreSQL).
 */
export function IsInstant() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isInstant',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isISO8601(value, { strict: true }) && Number.isFinite(Date.parse(value)),
        defaultMessage: () => `${propertyName} must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z`,
      },
    });
}

/** A string the gateway sends as an HTTP header value (see isHeaderValue); other types are left to the field's other validators. */
export function IsHeaderValue() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isHeaderValue',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || isHeaderValue(value),
        defaultMessage: () => `${propertyName} ${HEADER_VALUE_RULE}`,
      },
    });
}

/** A URL without `user:password@` (see hasUserinfo); other types are left to the field's other validators. */
export function HasNoUserinfo() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'hasNoUserinfo',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !hasUserinfo(value),
        defaultMessage: () =>
          `${propertyName} must not carry user:password@ (the gateway does not send it; put credentials in the key or headers, which are encrypted)`,
      },
    });
}

/**
 * An IANA time zone name (`UTC`, `Europe/Paris`, `America/Los_Angeles`) that this Node
 * knows; what PostgreSQL knows is checked where it is used (AnalyticsService).
 */
export function IsTimeZone() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isTimeZone',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(value) && knownTimeZone(value),
        defaultMessage: () => `${propertyName} must be an IANA time zone name, e.g. UTC or America/Los_Angeles`,
      },
    });
}

function knownTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
