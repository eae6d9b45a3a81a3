// The notice a project gets when most of its visits carry no client address: without one, IP-range
// and reverse-DNS verification cannot run and bots read "Not verifiable". It says how to fix it.
import { TEST_AGENT_ID } from '../catalog/test-agent.js';
import { request, type VisitJson } from './api.js';
import { h } from './dom.js';
import { formatCount } from './format.js';
import { href } from './route-state.js';

/** How many of the latest visits are looked at: enough to be representative, one small request. */
export const CLIENT_ADDRESS_SAMPLE = 200;

/**
 * The notice for a project whose latest visits mostly carry no client address, or null (also when
 * the visits cannot be read: the page shows its own error then). Test visits (sent from the
 * settings page, never with an address) are left out: a new project's first test visits would
 * otherwise ask its owner to fix a proxy set-up that may be right.
 */
export async function clientAddressNotice(projectId: string): Promise<HTMLElement | null> {
  let visits: readonly VisitJson[];
  try {
    visits = (await request<{ visits: VisitJson[] }>('GET', '/visits', { params: { project: projectId, limit: CLIENT_ADDRESS_SAMPLE } })).visits.filter((visit) => visit.agent_id !== TEST_AGENT_ID);
  } catch {
    return null;
  }
  const missing = visits.filter((visit) => visit.client_ip === null).length;
  if (visits.length === 0 || missing * 2 <= visits.length) return null;
  const total = visits.length;
  const share =
    missing < total ? `${formatCount(missing)} of the latest ${formatCount(total)} visits carried no client address. ` : total === 1 ? 'The only visit carried no client address. ' : `None of the latest ${formatCount(total)} visits carried a client address. `;
  return h(
    'div',
    { class: 'notice-box client-address-notice', role: 'note', 'aria-label': 'Client addresses missing' },
    h('p', {}, h('strong', {}, share), 'Without it, agents cannot be checked against the IP ranges their operators publish or by reverse DNS, so they show as "Not verifiable".'),
    h(
      'ul',
      { class: 'plain-list' },
      h('li', {}, 'A proxy or CDN in front of the site: name the header it sets (for example ', h('code', {}, 'cf-connecting-ip'), ' or ', h('code', {}, 'x-forwarded-for'), ') and the proxies to trust under Client IP in ', h('a', { href: href(['p', projectId, 'settings'], {}, false) }, 'the settings'), '.'),
      h('li', {}, 'Visits sent from your own code: set ', h('code', {}, 'client_ip'), ' on each visit; the agentwarden middleware fills it from the socket.'),
    ),
  );
}

/**
 * A place for the notice that fills itself once the visits are read, so the page around it is not
 * held up; asked once per page view (a redraw does not change what headers visits carried).
 */
export function clientAddressNoticeSlot(projectId: string): HTMLElement {
  const slot = h('div', {});
  void clientAddressNotice(projectId).then((notice) => notice !== null && slot.isConnected && slot.replaceWith(notice));
  return slot;
}
