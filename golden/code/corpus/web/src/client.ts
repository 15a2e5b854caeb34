// The only way the web app talks to the API: credentials, CSRF header, problem+json errors,
// timeouts and retries for idempotent calls.

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  request_id: string;
  errors?: { field: string; message: string }[];
}

export class ApiError extends Error {
  constructor(public problem: Problem) {
    super(`${problem.title}: ${problem.detail} (request ${problem.request_id})`);
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;

function csrfToken(): string {
  const m = document.cookie.match(/(?:^|; )tp_csrf=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

export async function apiFetch<T>(path: string, init: RequestInit = {}, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const method = (init.method ?? "GET").toUpperCase();
  const headers = new Headers(init.headers);
  if (method !== "GET" && method !== "HEAD") {
    headers.set("X-CSRF-Token", csrfToken());
  }
  try {
    const resp = await fetch(`/api${path}`, { ...init, headers, credentials: "include", signal: controller.signal });
    if (!resp.ok) {
      throw new ApiError((await resp.json()) as Problem);
    }
    return (await resp.json()) as T;
  } finally {
    clearTimeout(timer);
  }
}

/** Retries GETs on network errors and 5xx with jittered exponential backoff, 3 attempts at most. */
export async function getWithRetry<T>(path: string): Promise<T> {
  let delay = 300;
  for (let attempt = 1; ; attempt++) {
    try {
      return await apiFetch<T>(path);
    } catch (e) {
      const retriable = !(e instanceof ApiError) || e.problem.status >= 500;
      if (!retriable || attempt >= 3) throw e;
      await new Promise((r) => setTimeout(r, delay + Math.random() * 200));
      delay *= 2;
    }
  }
}
