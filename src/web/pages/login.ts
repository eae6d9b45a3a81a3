// The login form: the admin secret printed by `agentwarden serve` on first start.
import { ApiError, request } from '../api.js';
import { field, h, replace } from '../dom.js';

/** Draws the login form; calls `done` with the session's CSRF token after a successful login. */
export function renderLogin(main: HTMLElement, done: (csrfToken: string) => void): void {
  const input = h('input', { type: 'password', name: 'secret', autocomplete: 'current-password', required: true, spellcheck: 'false' });
  const message = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Log in');
  const form = h(
    'form',
    {
      class: 'card login',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        button.disabled = true;
        message.textContent = '';
        try {
          const session = await request<{ csrf_token: string }>('POST', '/admin/login', { body: { secret: input.value.trim() }, quiet401: true });
          input.value = '';
          done(session.csrf_token);
        } catch (error) {
          message.textContent = error instanceof ApiError ? error.message : 'The server cannot be reached.';
          input.focus();
          input.select();
        } finally {
          button.disabled = false;
        }
      },
    },
    h('h1', {}, 'Log in'),
    h('p', { class: 'muted' }, 'Use the admin secret that "agentwarden serve" printed on its first start. Lost it? Run ', h('code', {}, 'agentwarden admin reset-password'), ' on the server.'),
    // A fixed user name lets password managers store the secret (there is one admin).
    h('input', { type: 'text', name: 'username', autocomplete: 'username', value: 'admin', hidden: true, 'aria-hidden': 'true', tabindex: -1 }),
    field('Admin secret', input),
    message,
    button,
  );
  replace(main, form);
  input.focus();
}
