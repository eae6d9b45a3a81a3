// The ClickHouse adapter's public API (package export "./clickhouse"): the scale-out visit store.
export { openClickHouseVisitStore } from './clickhouse-visit-store.js';
export type { ClickHouseVisitStore, ClickHouseVisitStoreOptions } from './clickhouse-visit-store.js';
export type { ClickHouseProjectInfo, ClickHouseTokenInfo } from './project-tables.js';
export { SCHEMA_VERSION as CLICKHOUSE_SCHEMA_VERSION } from './schema.js';
