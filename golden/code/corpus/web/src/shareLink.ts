// Shared links: viewer-only, optional expiry sent as an ISO 8601 instant with offset (a local
// date parsed as UTC midnight made links expire a day early west of UTC).

import { apiFetch } from "./client";

export interface ShareLink {
  id: string;
  albumId: string;
  url: string;
  expiresAt: string | null;
  role: "viewer";
}

/** End of the chosen day in the user's own time zone, as an instant with offset. */
export function expiryInstant(date: { year: number; month: number; day: number }): string {
  const local = new Date(date.year, date.month - 1, date.day, 23, 59, 59);
  const offsetMin = -local.getTimezoneOffset();
  const sign = offsetMin >= 0 ? "+" : "-";
  const pad = (n: number) => String(Math.floor(Math.abs(n))).padStart(2, "0");
  const base = `${local.getFullYear()}-${pad(local.getMonth() + 1)}-${pad(local.getDate())}T23:59:59`;
  return `${base}${sign}${pad(offsetMin / 60)}:${pad(offsetMin % 60)}`;
}

export function createShareLink(albumId: string, expires?: { year: number; month: number; day: number }): Promise<ShareLink> {
  return apiFetch<ShareLink>(`/albums/${albumId}/links`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ expires_at: expires ? expiryInstant(expires) : null }),
  });
}

export function revokeShareLink(albumId: string, linkId: string): Promise<void> {
  return apiFetch<void>(`/albums/${albumId}/links/${linkId}`, { method: "DELETE" });
}

export function isExpired(link: ShareLink, now = new Date()): boolean {
  return link.expiresAt !== null && new Date(link.expiresAt).getTime() <= now.getTime();
}
