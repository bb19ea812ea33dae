import type { CheckInput, GuardrailCheck } from '../../context/guardrail-records';

/**
 * How the webhook check reaches its hook. The gateway passes one that goes through its
 * SSRF host policy, so no check opens a connection of its own. A timeout or a network
 * failure rejects; any HTTP status resolves.
 */
export type PostJson = (url: string, headers: Record<string, string>, body: unknown, timeoutMs: number) => Promise<{ status: number; json: unknown }>;

/** What checks need from outside the library. */
export interface CheckDependencies {
  postJson: PostJson;
}

/** A check's parameters read from the config: the check, or the problems naming each bad field. */
export interface ParsedCheck {
  check?: GuardrailCheck;
  problems: string[];
}

/** `params` are the check's fields besides `type`; `path` is where the check sits in the config. */
export type CheckParser = (params: Record<string, unknown>, path: string, deps: CheckDependencies) => ParsedCheck;

/** The text the whole-text checks look at. */
export const joinedText = (input: CheckInput): string => input.texts.join('\n');
