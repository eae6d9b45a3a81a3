// The User-Agent of agentwarden's own test agent (catalog id "agentwarden-test"), sent by "send a test visit".

/**
 * The documented User-Agent of the agentwarden test agent; the default catalog identifies it as
 * `agentwarden-test` (type "Developer Helper", token `AgentwardenTest`).
 * @example
 * await engine.identify({ request_headers: { 'user-agent': TEST_AGENT_USER_AGENT } }); // agent_id "agentwarden-test"
 */
export const TEST_AGENT_USER_AGENT = 'Mozilla/5.0 (compatible; AgentwardenTest/1.0; +https://github.com/agentwarden/agentwarden#test-agent)';

/** The catalog id of the agentwarden test agent: its visits are "test visits", which counts may leave out. */
export const TEST_AGENT_ID = 'agentwarden-test';
