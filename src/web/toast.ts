// A polite status line for short confirmations ("Copied", "Saved"), announced by screen readers.

let timer: ReturnType<typeof setTimeout> | undefined;

/** Shows a message for a few seconds in the page's live region. */
export function toast(message: string, kind: 'info' | 'error' = 'info'): void {
  const box = document.getElementById('toast');
  if (box === null) return;
  box.textContent = message;
  box.className = `toast visible ${kind}`;
  if (timer !== undefined) clearTimeout(timer);
  timer = setTimeout(() => {
    box.className = 'toast';
    box.textContent = '';
  }, 4000);
}

/** Hides the message at once (on navigation, so it never covers the next page). */
export function clearToast(): void {
  const box = document.getElementById('toast');
  if (timer !== undefined) clearTimeout(timer);
  if (box !== null) {
    box.className = 'toast';
    box.textContent = '';
  }
}
