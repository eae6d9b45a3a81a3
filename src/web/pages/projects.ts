// The projects page: every project with its live tokens and links to its pages, and a form to
// create one (its token is then revealed once on its settings page).
import { ApiError, request, type ProjectInfo } from '../api.js';
import type { Page } from '../app.js';
import { field, h, replace } from '../dom.js';
import { formatCount, formatDay } from '../format.js';
import { revealOnce } from '../reveal.js';

/** Draws the projects list and the create form. */
export const renderProjects: Page = async ({ main }) => {
  const { projects } = await request<{ projects: ProjectInfo[] }>('GET', '/admin/projects');
  const nameInput = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, placeholder: 'example.com', autocomplete: 'off' });
  const message = h('p', { class: 'error', role: 'alert' });
  const create = h(
    'form',
    {
      class: 'card inline-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        message.textContent = '';
        try {
          const created = await request<{ id: string; token: string }>('POST', '/admin/projects', { body: { name: nameInput.value } });
          revealOnce(created.id, created.token);
          window.location.hash = `#/p/${encodeURIComponent(created.id)}/settings`;
        } catch (error) {
          message.textContent = error instanceof ApiError ? error.message : String(error);
        }
      },
    },
    h('h2', {}, 'Create a project'),
    h('div', { class: 'row' }, field('Project name', nameInput, 'Usually the website it tracks.'), h('button', { type: 'submit', class: 'primary' }, 'Create project')),
    message,
  );

  const list =
    projects.length === 0
      ? h('p', { class: 'empty' }, 'No projects yet — create one below to get an access token.')
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'projects stack' },
            h('caption', { class: 'visually-hidden' }, 'Projects'),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Project'), h('th', { scope: 'col' }, 'Created'), h('th', { scope: 'col', class: 'num' }, 'Live tokens'), h('th', { scope: 'col' }, 'Open'))),
            h(
              'tbody',
              {},
              ...projects.map((project) => {
                const base = `#/p/${encodeURIComponent(project.id)}`;
                return h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, h('a', { href: `${base}/settings` }, project.name), h('div', { class: 'muted small mono' }, project.id)),
                  h('td', { 'data-label': 'Created' }, formatDay(project.created)),
                  h('td', { class: 'num', 'data-label': 'Live tokens' }, formatCount(project.tokens.filter((t) => t.revoked === null).length)),
                  h('td', { class: 'links', 'data-label': 'Open' }, h('div', {}, h('a', { href: `${base}/settings` }, 'Settings'), h('a', { href: `${base}/timeline` }, 'Timeline'), h('a', { href: `${base}/analytics` }, 'Analytics'), h('a', { href: `${base}/agents` }, 'Agents'))),
                );
              }),
            ),
          ),
        );
  replace(main, h('h1', {}, 'Projects'), list, create);
};
