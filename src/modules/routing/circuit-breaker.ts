import type { CircuitBreakerPolicy } from '../../context/route-plan';

/**
 * One target's breaker. Closed: requests pass and failures within `windowMs` are
 * counted. At `failureThreshold` it opens: requests are refused for `cooldownMs`.
 * Then it lets exactly one probe through (half-open): success closes it, failure
 * opens it for another cooldown.
 */
export class CircuitBreaker {
  private failures: number[] = [];
  private openUntil = 0;
  private probing = false;

  constructor(private policy: CircuitBreakerPolicy) {}

  /** The newest config wins: a changed threshold applies from the next decision on. */
  setPolicy(policy: CircuitBreakerPolicy): void {
    this.policy = policy;
  }

  /** Whether a request may go now; in half-open state only the first caller gets through. */
  tryAcquire(now: number): boolean {
    if (this.openUntil === 0) return true;
    if (now < this.openUntil || this.probing) return false;
    this.probing = true;
    return true;
  }

  /** Milliseconds until a probe will be let through (0 when closed). */
  retryAfterMs(now: number): number {
    return this.openUntil === 0 ? 0 : Math.max(0, this.openUntil - now);
  }

  onSuccess(): void {
    this.failures = [];
    this.openUntil = 0;
    this.probing = false;
  }

  /** Records an attempt's outcome status; only the policy's statuses count as failures. */
  onFailure(status: number, unreachable: boolean, now: number): void {
    if (!unreachable && !this.policy.onStatusCodes.includes(status)) {
      if (this.probing) this.onSuccess(); // the target answered: it is up
      return;
    }
    if (this.probing) {
      this.probing = false;
      this.openUntil = now + this.policy.cooldownMs;
      return;
    }
    this.failures = this.failures.filter((at) => at > now - this.policy.windowMs);
    this.failures.push(now);
    if (this.failures.length >= this.policy.failureThreshold) {
      this.failures = [];
      this.openUntil = now + this.policy.cooldownMs;
    }
  }

  /** A probe that ended without a verdict (the client left) must not block the breaker. */
  release(): void {
    this.probing = false;
  }
}

/**
 * The breakers of this process, one per upstream identity (provider, credential, host,
 * model), shared by every config that routes there: an outage is the target's, not
 * the config's. State is per instance; each instance learns of an outage on its own.
 */
export class CircuitBreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreaker>();

  get(identity: string, policy: CircuitBreakerPolicy): CircuitBreaker {
    let breaker = this.breakers.get(identity);
    if (!breaker) {
      if (this.breakers.size >= 10_000) this.breakers.clear(); // bounded: identities come from configs
      breaker = new CircuitBreaker(policy);
      this.breakers.set(identity, breaker);
    } else breaker.setPolicy(policy);
    return breaker;
  }
}
