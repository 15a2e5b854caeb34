// Storage quota in the web app: shown before the user picks files, refreshed after uploads and
// deletes through React Query keys that include the user id.

import { QueryClient, useQuery } from "@tanstack/react-query";
import { apiFetch } from "./client";

export interface Quota {
  quotaBytes: number;
  usedBytes: number;
  reservedBytes: number;
}

export const quotaKey = (userId: string) => ["quota", userId] as const;

export function remainingBytes(q: Quota): number {
  return Math.max(q.quotaBytes - q.usedBytes - q.reservedBytes, 0);
}

/** Whether a selection of files fits; checked before the upload starts. */
export function fitsInQuota(q: Quota, files: { size: number }[]): boolean {
  const total = files.reduce((sum, f) => sum + f.size, 0);
  return total <= remainingBytes(q);
}

export function formatBytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export function useQuota(userId: string) {
  return useQuery({ queryKey: quotaKey(userId), queryFn: () => apiFetch<Quota>("/quota") });
}

/** Deleting photos or purging the trash frees space: refetch the quota bar. */
export function invalidateQuotaAfterDelete(client: QueryClient, userId: string): Promise<void> {
  return client.invalidateQueries({ queryKey: quotaKey(userId) });
}
