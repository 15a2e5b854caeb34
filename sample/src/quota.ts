// Per-account storage quotas.

export interface Quota {
  accountId: string;
  limitBytes: number;
  usedBytes: number;
}

/** Returns true when an upload of `size` bytes still fits in the quota. */
export function fitsInQuota(quota: Quota, size: number): boolean {
  return quota.usedBytes + size <= quota.limitBytes;
}

export class QuotaCache {
  private entries = new Map<string, Quota>();

  get(accountId: string): Quota | undefined {
    return this.entries.get(accountId);
  }

  invalidate(accountId: string): void {
    this.entries.delete(accountId);
  }
}
