/**
 * How much a model may think, in each vendor's terms (CONTRACT section 12, "mapped"):
 * OpenAI's `reasoning_effort` (a level), Anthropic's `thinking.budget_tokens` and
 * Gemini's `thinkingConfig.thinkingBudget` (tokens). The common format is OpenAI's level:
 * `/v1/messages` bridged to a chat provider turns a budget into a level, and each chat
 * translation turns the level into its vendor's budget.
 *
 * Anthropic's budget for each level is also the level's lower bound when a budget is
 * read back (`effortForAnthropicBudget`), so a level that goes to Anthropic and back
 * stays the same level. 1024 is Anthropic's smallest budget; 16384 is the budget
 * Anthropic's docs start to call large; Claude Code's default (31999) is `high`, as is
 * any budget above it.
 */
export const ANTHROPIC_THINKING_BUDGETS = { low: 1024, medium: 4096, high: 16384, xhigh: 32768 } as const;

export type ThinkingEffort = keyof typeof ANTHROPIC_THINKING_BUDGETS;

/**
 * Gemini 2.5's budgets for each level: Flash thinks up to 24576 tokens (`high`), Pro up to
 * 32768 (`xhigh`; Flash answers that with its own 400, which says more than a quiet cap).
 * 0 (none, minimal) turns thinking off where the model allows it (Flash and Flash-Lite).
 */
export const GEMINI_THINKING_BUDGETS: Record<string, number> = { none: 0, minimal: 0, low: 1024, medium: 8192, high: 24576, xhigh: 32768 };

/**
 * The OpenAI level of an Anthropic thinking budget: below 4096 low, below 16384 medium,
 * else high. Never xhigh: few OpenAI models take it, and every reasoning model takes high.
 */
export function effortForAnthropicBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens < ANTHROPIC_THINKING_BUDGETS.medium) return 'low';
  if (budgetTokens < ANTHROPIC_THINKING_BUDGETS.high) return 'medium';
  return 'high';
}
