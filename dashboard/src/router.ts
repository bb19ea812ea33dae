import { useEffect, useState } from 'preact/hooks';

/** Client-side routes under /dashboard: the path after it and the query string. */
export const BASE = '/dashboard';

export interface Location {
  path: string;
  query: URLSearchParams;
  search: string;
}

function current(): Location {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) || '/' : '/';
  return { path: path.replace(/\/+$/, '') || '/', query: new URLSearchParams(window.location.search), search: window.location.search };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

/** Goes to a dashboard URL (`/logs?user=ada`, relative to /dashboard). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to.startsWith('/') ? to : `/${to}`}`;
  if (url === window.location.pathname + window.location.search) return;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((listener) => listener());
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/** href for a dashboard path. */
export const href = (to: string) => `${BASE}${to}`;

/** A click on a dashboard link that the router should take (not a new tab or window). */
export function routeClick(event: MouseEvent, to: string): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(to);
}
