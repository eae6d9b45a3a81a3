// The node adapter's public API ("agentwarden/node"): platform pieces for Node.js servers.
export type { Command, CommandIo } from './commands/command.js';
