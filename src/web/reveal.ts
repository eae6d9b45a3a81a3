// A token shown once: kept in memory only until the settings page has displayed it, never stored.

let pending: { projectId: string; token: string } | undefined;

/** Hands a new token to the next settings page of its project. */
export function revealOnce(projectId: string, token: string): void {
  pending = { projectId, token };
}

/** Takes the token waiting for this project, if any; a second call returns undefined. */
export function takeRevealed(projectId: string): string | undefined {
  if (pending?.projectId !== projectId) return undefined;
  const { token } = pending;
  pending = undefined;
  return token;
}
