// The projects page: every project with its visit count, last visit and live tokens, links to its
// pages, rename and delete (confirmed by typing its name), and a form to create one (its token is
// then revealed once on its settings page). Test visits are left out of the counts unless asked.
import { errorText, request, type ProjectInfo } from '../api.js';
import type { Page } from '../app.js';
import { field, h, replace } from '../dom.js';
import { formatCount, formatDateTime, formatDay, formatTime, plural } from '../format.js';
import { revealOnce } from '../reveal.js';
import { updateParams } from '../route-state.js';
import { toast } from '../toast.js';

/** A project with its visit counts (GET /admin/projects?visits=...). */
interface CountedProject extends ProjectInfo {
  readonly visits: { readonly visits: number; readonly test_visits: number; readonly last_visit: string | null };
}


/** A modal dialog with a form; resolves to whether it was submitted. */
function ask(title: string, body: HTMLElement[], confirmLabel: string, danger: boolean, ready: () => boolean = () => true): { dialog: HTMLDialogElement; done: Promise<boolean> } {
  const confirm = h('button', { type: 'submit', class: danger ? 'danger' : 'primary', value: 'ok' }, confirmLabel);
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const titleId = `dialog-${Math.random().toString(36).slice(2)}`;
  const form = h('form', { method: 'dialog' }, h('h2', { id: titleId }, title), ...body, h('div', { class: 'row dialog-actions' }, confirm, cancel));
  const dialog = h('dialog', { 'aria-labelledby': titleId }, form);
  const sync = () => (confirm.disabled = !ready());
  form.addEventListener('input', sync);
  sync();
  const done = new Promise<boolean>((resolve) => {
    cancel.addEventListener('click', () => dialog.close('cancel'));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
  });
  document.body.append(dialog);
  dialog.showModal();
  return { dialog, done };
}

/** Draws the projects list and the create form. */
export const renderProjects: Page = async ({ main, route, refresh }) => {
  const withTest = route.params.get('test_visits') === 'include';
  const { projects } = await request<{ projects: CountedProject[] }>('GET', '/admin/projects', { params: { visits: withTest ? 'with-test' : 'without-test' } });
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
          message.textContent = errorText(error);
        }
      },
    },
    h('h2', {}, 'Create a project'),
    h('div', { class: 'row' }, field('Project name', nameInput, 'Usually the website it tracks.'), h('button', { type: 'submit', class: 'primary' }, 'Create project')),
    message,
  );

  const rename = async (project: CountedProject) => {
    const input = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, value: project.name, autocomplete: 'off' });
    const { done } = ask(`Rename ${project.name}`, [field('New name', input)], 'Rename', false, () => input.value.trim() !== '' && input.value.trim() !== project.name);
    input.select();
    if (!(await done)) return;
    try {
      await request('PATCH', `/admin/projects/${encodeURIComponent(project.id)}`, { body: { name: input.value.trim() } });
      toast(`Renamed to ${input.value.trim()}.`);
      refresh();
    } catch (error) {
      toast(errorText(error), 'error');
    }
  };
  const remove = async (project: CountedProject) => {
    const input = h('input', { type: 'text', name: 'confirm', autocomplete: 'off', spellcheck: 'false' });
    const total = project.visits.visits + (withTest ? 0 : project.visits.test_visits);
    const { done } = ask(
      `Delete ${project.name}?`,
      [
        h('p', {}, `Its ${plural(total, 'visit')}, access tokens, settings and webhooks are deleted with it. Clients still sending its token get 401. This cannot be undone.`),
        field(`Type the project name (${project.name}) to confirm`, input),
      ],
      'Delete project',
      true,
      () => input.value.trim() === project.name,
    );
    input.focus();
    if (!(await done)) return;
    try {
      await request('DELETE', `/admin/projects/${encodeURIComponent(project.id)}`);
      toast(`Deleted ${project.name}.`);
      refresh();
    } catch (error) {
      toast(errorText(error), 'error');
    }
  };

  const testToggle = h('input', { type: 'checkbox', id: 'count-test-visits', checked: withTest });
  testToggle.addEventListener('change', () => {
    updateParams({ test_visits: testToggle.checked ? 'include' : undefined });
    refresh();
  });
  const toolbar = h('div', { class: 'row projects-toolbar' }, h('label', { class: 'check switch', for: testToggle.id }, testToggle, ' Count test visits'));

  const visitsCell = (project: CountedProject) => {
    const { visits, test_visits: tests } = project.visits;
    const note = !withTest && tests > 0 ? h('div', { class: 'muted small' }, `+${plural(tests, 'test visit')} not counted`) : null;
    return h('td', { class: 'num', 'data-label': 'Visits' }, h('div', {}, formatCount(visits), note));
  };
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
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', { scope: 'col' }, 'Project'),
                h('th', { scope: 'col', class: 'num' }, 'Visits'),
                h('th', { scope: 'col' }, 'Last visit'),
                h('th', { scope: 'col' }, 'Created'),
                h('th', { scope: 'col', class: 'num' }, 'Live tokens'),
                h('th', { scope: 'col' }, 'Open'),
                h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Manage')),
              ),
            ),
            h(
              'tbody',
              {},
              ...projects.map((project) => {
                const base = `#/p/${encodeURIComponent(project.id)}`;
                const last = project.visits.last_visit;
                return h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, h('a', { href: `${base}/settings` }, project.name), h('div', { class: 'muted small mono' }, project.id)),
                  visitsCell(project),
                  h('td', { 'data-label': 'Last visit' }, last === null ? h('span', { class: 'muted' }, 'None yet') : h('time', { datetime: last, title: formatDateTime(last) }, formatTime(last))),
                  h('td', { 'data-label': 'Created' }, formatDay(project.created)),
                  h('td', { class: 'num', 'data-label': 'Live tokens' }, formatCount(project.tokens.filter((t) => t.revoked === null).length)),
                  h('td', { class: 'links', 'data-label': 'Open' }, h('div', {}, h('a', { href: `${base}/settings` }, 'Settings'), h('a', { href: `${base}/timeline` }, 'Timeline'), h('a', { href: `${base}/analytics` }, 'Analytics'), h('a', { href: `${base}/agents` }, 'Agents'))),
                  h(
                    'td',
                    { class: 'manage', 'data-label': '' },
                    h(
                      'div',
                      { class: 'row' },
                      h('button', { type: 'button', class: 'small', 'aria-label': `Rename ${project.name}`, onclick: () => void rename(project) }, 'Rename'),
                      h('button', { type: 'button', class: 'small danger', 'aria-label': `Delete ${project.name}`, onclick: () => void remove(project) }, 'Delete'),
                    ),
                  ),
                );
              }),
            ),
          ),
        );
  replace(main, h('h1', {}, 'Projects'), projects.length === 0 ? null : toolbar, list, create);
};
