// The dashboard's entry point: the admin session, the hash router and the page shell. Routes:
// #/ (projects), #/agents[/ID] (the catalog), and per project #/p/ID/settings, /timeline,
// /analytics, /agents[/AGENT], /types/TYPE and /visits/VISIT; each may carry a query
// (range, filters, tz=utc) so a link shows the same view.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { ApiError, request, setCsrfToken, setUnauthorizedHandler, type ProjectInfo } from './api.js';
import { h, replace, setTitle } from './dom.js';
import { setUtc } from './format.js';
import { renderAgent } from './pages/agent.js';
import { renderAgentType } from './pages/agent-type.js';
import { renderAnalytics } from './pages/analytics.js';
import { renderCatalog, renderCatalogAgent } from './pages/catalog.js';
import { renderLogin } from './pages/login.js';
import { renderProjects } from './pages/projects.js';
import { renderSettings } from './pages/settings.js';
import { renderTimeline } from './pages/timeline.js';
import { renderVisit } from './pages/visit.js';
import { currentRoute, href, type HashRoute } from './route-state.js';
import { watchStoreStatus } from './store-status.js';
import { clearToast, toast } from './toast.js';

/** What a page gets: where to draw, the project (for project pages) and a way to navigate. */
export interface PageContext {
  readonly main: HTMLElement;
  readonly project?: ProjectInfo;
  /** The page's path segments after its own name (an agent id, a visit id) and its query. */
  readonly route: HashRoute;
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

// Project pages by their first segment: the tabs in the navigation, and pages reached from them.
const PROJECT_PAGES: Record<string, { title: string; page: Page; tab?: boolean; details?: 'optional' | 'required' }> = {
  settings: { title: 'Settings', page: renderSettings, tab: true },
  timeline: { title: 'Timeline', page: renderTimeline, tab: true },
  analytics: { title: 'Analytics', page: renderAnalytics, tab: true },
  agents: { title: 'Agents', page: (context) => (context.route.segments.length > 0 ? renderAgent(context) : renderCatalog(context)), tab: true, details: 'optional' },
  types: { title: 'Agent type', page: renderAgentType, details: 'required' },
  visits: { title: 'Visit', page: renderVisit, details: 'required' },
};

type Target =
  | { kind: 'projects' }
  | { kind: 'not-found' }
  | { kind: 'catalog'; rest: readonly string[] }
  | { kind: 'project'; id: string; tab: string; rest: readonly string[] };

function parseRoute(route: HashRoute): Target {
  const [first, second, third, ...rest] = route.segments;
  if (first === 'agents') return { kind: 'catalog', rest: route.segments.slice(1, 2) };
  if (first === 'p' && second !== undefined && third !== undefined) {
    const page = PROJECT_PAGES[third];
    const details = rest.length === 0 ? 'none' : rest.length === 1 ? 'one' : 'many';
    if (page !== undefined && details !== 'many' && (details === 'one' ? page.details !== undefined : page.details !== 'required')) return { kind: 'project', id: second, tab: third, rest };
  }
  // An address that names no page says so, rather than showing the projects under it.
  return route.segments.length === 0 ? { kind: 'projects' } : { kind: 'not-found' };
}

function drawNav(project: ProjectInfo | undefined, tab: string | undefined): void {
  const link = (target: string, label: string, current: boolean) => h('a', { href: target, 'aria-current': current ? 'page' : undefined }, label);
  const items: HTMLElement[] = [link('#/', 'Projects', project === undefined && tab === undefined)];
  if (project === undefined) items.push(link('#/agents', 'Agents', tab === 'agents'));
  else {
    items.push(h('span', { class: 'nav-project', title: project.id }, project.name));
    for (const [key, { title, tab: isTab }] of Object.entries(PROJECT_PAGES)) if (isTab === true) items.push(link(href(['p', project.id, key]), title, key === tab));
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
    setTitle('Log in');
    renderLogin(main, (csrf) => {
      setCsrfToken(csrf);
      loggedIn = true;
      // The form is gone: focus goes to the page it opened, as after any navigation.
      void route().then(() => main.focus());
    });
    return;
  }
  const hashRoute = currentRoute();
  setUtc(hashRoute.params.get('tz') === 'utc');
  const target = parseRoute(hashRoute);
  try {
    if (target.kind === 'projects') {
      drawNav(undefined, undefined);
      setTitle('Projects');
      cleanup = await renderProjects({ main, route: hashRoute, refresh: () => void route() });
      return;
    }
    if (target.kind === 'not-found') {
      drawNav(undefined, undefined);
      setTitle('Page not found');
      replace(main, h('h1', {}, 'Page not found'), h('p', {}, 'This address names no page of the dashboard. ', h('a', { href: '#/' }, 'Back to the projects')));
      return;
    }
    if (target.kind === 'catalog') {
      drawNav(undefined, 'agents');
      setTitle('Agents');
      const context = { main, route: { segments: target.rest, params: hashRoute.params }, refresh: () => void route() };
      cleanup = await (target.rest.length === 0 ? renderCatalog(context) : renderCatalogAgent(context));
      return;
    }
    const { projects } = await request<{ projects: ProjectInfo[] }>('GET', '/admin/projects');
    const project = projects.find((p) => p.id === target.id);
    if (project === undefined) {
      drawNav(undefined, undefined);
      setTitle('No such project');
      replace(main, h('h1', {}, 'No such project'), h('p', {}, 'This project does not exist. ', h('a', { href: '#/' }, 'Back to the projects')));
      return;
    }
    drawNav(project, target.tab);
    const { title, page } = PROJECT_PAGES[target.tab]!;
    setTitle(title, project.name);
    cleanup = await page({ main, project, route: { segments: target.rest, params: hashRoute.params }, refresh: () => void route() });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    replace(main, h('h1', {}, 'Something went wrong'), h('p', { class: 'error' }, error instanceof Error ? error.message : String(error)));
  }
}

async function start(): Promise<void> {
  watchStoreStatus(document.getElementById('store-status') as HTMLElement);
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
