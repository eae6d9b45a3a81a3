// The dashboard's entry point: the admin session, the hash router (#/, #/p/ID/settings,
// #/p/ID/timeline, #/p/ID/analytics) and the page shell.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { ApiError, request, setCsrfToken, setUnauthorizedHandler, type ProjectInfo } from './api.js';
import { h, replace } from './dom.js';
import { renderAnalytics } from './pages/analytics.js';
import { renderLogin } from './pages/login.js';
import { renderProjects } from './pages/projects.js';
import { renderSettings } from './pages/settings.js';
import { renderTimeline } from './pages/timeline.js';
import { clearToast, toast } from './toast.js';

/** What a page gets: where to draw, the project (for project pages) and a way to navigate. */
export interface PageContext {
  readonly main: HTMLElement;
  readonly project?: ProjectInfo;
  /** Reloads the project list and draws the current page again. */
  readonly refresh: () => void;
}

/** A page draws itself into `main` and may return a cleanup (close streams, remove listeners). */
export type Page = (context: PageContext) => Promise<(() => void) | void>;

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const sessionBox = document.getElementById('session') as HTMLElement;
let cleanup: (() => void) | void = undefined;
let loggedIn = false;

const PROJECT_PAGES: Record<string, { title: string; page: Page }> = {
  settings: { title: 'Settings', page: renderSettings },
  timeline: { title: 'Timeline', page: renderTimeline },
  analytics: { title: 'Analytics', page: renderAnalytics },
};

function parseRoute(hash: string): { kind: 'projects' } | { kind: 'project'; id: string; tab: string } {
  const match = /^#\/p\/([^/]+)\/([a-z]+)$/.exec(hash);
  if (match !== null && PROJECT_PAGES[match[2]!] !== undefined) return { kind: 'project', id: decodeURIComponent(match[1]!), tab: match[2]! };
  return { kind: 'projects' };
}

function drawNav(project: ProjectInfo | undefined, tab: string | undefined): void {
  const link = (href: string, label: string, current: boolean) => h('a', { href, 'aria-current': current ? 'page' : undefined }, label);
  const items: HTMLElement[] = [link('#/', 'Projects', project === undefined)];
  if (project !== undefined) {
    items.push(h('span', { class: 'nav-project', title: project.id }, project.name));
    for (const [key, { title }] of Object.entries(PROJECT_PAGES)) items.push(link(`#/p/${encodeURIComponent(project.id)}/${key}`, title, key === tab));
  }
  replace(nav, ...items);
  replace(
    sessionBox,
    loggedIn
      ? h('button', {
          type: 'button',
          class: 'link-button',
          onclick: async () => {
            try {
              await request('POST', '/admin/logout');
            } finally {
              setCsrfToken(undefined);
              loggedIn = false;
              void route();
            }
          },
        }, 'Log out')
      : null,
  );
}

async function route(): Promise<void> {
  if (typeof cleanup === 'function') cleanup();
  cleanup = undefined;
  if (!loggedIn) {
    drawNav(undefined, undefined);
    replace(nav);
    document.title = 'Log in · agentwarden';
    renderLogin(main, (csrf) => {
      setCsrfToken(csrf);
      loggedIn = true;
      void route();
    });
    return;
  }
  const target = parseRoute(window.location.hash);
  try {
    if (target.kind === 'projects') {
      drawNav(undefined, undefined);
      document.title = 'Projects · agentwarden';
      cleanup = await renderProjects({ main, refresh: () => void route() });
      return;
    }
    const { projects } = await request<{ projects: ProjectInfo[] }>('GET', '/admin/projects');
    const project = projects.find((p) => p.id === target.id);
    if (project === undefined) {
      drawNav(undefined, undefined);
      replace(main, h('h1', {}, 'No such project'), h('p', {}, 'This project does not exist. ', h('a', { href: '#/' }, 'Back to the projects')));
      return;
    }
    drawNav(project, target.tab);
    const { title, page } = PROJECT_PAGES[target.tab]!;
    document.title = `${title} · ${project.name} · agentwarden`;
    cleanup = await page({ main, project, refresh: () => void route() });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    replace(main, h('h1', {}, 'Something went wrong'), h('p', { class: 'error' }, error instanceof Error ? error.message : String(error)));
  }
}

async function start(): Promise<void> {
  setUnauthorizedHandler(() => {
    if (!loggedIn) return;
    loggedIn = false;
    setCsrfToken(undefined);
    toast('Your session ended; log in again.');
    void route();
  });
  // The skip link moves focus without touching the hash, which the router owns.
  document.getElementById('skip-link')?.addEventListener('click', (event) => {
    event.preventDefault();
    main.focus();
  });
  try {
    const session = await request<{ csrf_token: string }>('GET', '/admin/session', { quiet401: true });
    setCsrfToken(session.csrf_token);
    loggedIn = true;
  } catch {
    loggedIn = false;
  }
  window.addEventListener('hashchange', () => {
    if (window.location.hash === '' || window.location.hash.startsWith('#/')) {
      clearToast();
      void route().then(() => main.focus({ preventScroll: false }));
    }
  });
  await route();
}

void start();
