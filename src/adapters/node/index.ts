// The node adapter's public API ("agentwarden/node"): platform pieces for Node.js servers.
export type { Command, CommandIo } from './commands/command.js';
export { createSafeDirectoryFetcher, DIRECTORY_ACCEPT } from './directory-fetcher.js';
export type { DirectoryLookup, SafeDirectoryFetcherOptions } from './directory-fetcher.js';
export { nodeEd25519 } from './ed25519.js';
export { classifyAddress } from './address-policy.js';
export type { AddressClass } from './address-policy.js';
export { createNodeResolver } from './dns-resolver.js';
export type { NodeResolverOptions } from './dns-resolver.js';
export { bundledIpRangesDirectory, loadIpRangeLists } from './ip-ranges-loader.js';
export { IP_RANGE_SOURCES } from './commands/refresh-ip-ranges.js';
export { startNodeServer } from './server.js';
export type { LogEntry, NodeServer, NodeServerOptions, ServerTimeouts } from './server.js';
export { hashTokenNode, openSqliteStore, SCHEMA_VERSION } from './sqlite-store.js';
export type { ProjectInfo, SqliteStore, SqliteStoreOptions, StoredVisitRow, TokenInfo } from './sqlite-store.js';
export { createJsonLog } from './json-log.js';
export type { JsonLog } from './json-log.js';
export { createNodeVerifiers, NODE_VERIFIER_METHODS } from './verifiers.js';
export type { NodeVerifierMethod, NodeVerifiersOptions } from './verifiers.js';
