// The core public API of agentwarden: explicit named exports only.
export { createEngine } from './engine.js';
export type { Engine, EngineOptions, IdentificationItem, NormalizedRequestContext, VerificationItem, VerificationOutcome, VerificationReport } from './engine.js';
export { createCatalog, resolveAgentType } from './catalog/catalog.js';
export type { Catalog, CatalogOptions } from './catalog/catalog.js';
export { isUnlistedAgentId } from './catalog/unlisted-agent.js';
export { isAttackProbeId } from './catalog/attack-probe.js';
export { defaultCatalogDocument } from './catalog/default-catalog.js';
export { TEST_AGENT_ID, TEST_AGENT_USER_AGENT } from './catalog/test-agent.js';
export { AGENT_TYPES, AGENT_TYPE_ALIASES } from './catalog/types.js';
export type { Agent, AgentLayer, AgentMatch, AgentType, CatalogDocument } from './catalog/types.js';
export { normalizeHeaders } from './identify/headers.js';
export type { HeadersInput } from './identify/headers.js';
export type { Identification, IdentificationResult, IdentifiedAgent, UnknownAgent } from './identify/identification.js';
export { runVerifierChain } from './verify/chain.js';
export type { ChainOutcome, VerifiedResult } from './verify/chain.js';
export type {
  CheckOutcome,
  IpRangeReason,
  ReverseDnsReason,
  VerificationCheck,
  VerificationContext,
  VerificationMethod,
  VerificationReason,
  VerificationRequest,
  Verifier,
  WebBotAuthReason,
} from './verify/types.js';
export { ipRangeVerifier } from './verify/ip-ranges/ip-range-verifier.js';
export type { IpRangeVerifierOptions } from './verify/ip-ranges/ip-range-verifier.js';
export { escapeControlCharacters, parseCreationTime, parseIpRangeList } from './verify/ip-ranges/ip-list.js';
export type { IpRangeList } from './verify/ip-ranges/ip-list.js';
export { clientAddressFromPeer, createClientIpRule, remoteAddrPeerRule } from './verify/client-ip.js';
export { CLOUDFLARE_IP_RANGES } from './verify/proxy-ranges.js';
export type { ClientIpOptions, ClientIpRule } from './verify/client-ip.js';
export { reverseDnsVerifier } from './verify/reverse-dns.js';
export type { DnsResolver, ReverseDnsCacheOptions, ReverseDnsVerifierOptions } from './verify/reverse-dns.js';
export { DirectoryFetchError } from './verify/web-bot-auth/directory-fetcher.js';
export type { DirectoryFetcher, DirectoryFetchFailure, DirectoryResponse } from './verify/web-bot-auth/directory-fetcher.js';
export { webBotAuthVerifier } from './verify/web-bot-auth/web-bot-auth-verifier.js';
export type { PinnedKey, WebBotAuthVerifierOptions } from './verify/web-bot-auth/web-bot-auth-verifier.js';
export { createKeyDirectoryCache } from './verify/web-bot-auth/key-directory.js';
export type { DirectoryFailure, KeyDirectoryCache, KeyDirectoryCacheOptions, KeyLookup } from './verify/web-bot-auth/key-directory.js';
export { createNonceStore } from './verify/web-bot-auth/replay-guard.js';
export type { NonceStore, NonceStoreOptions } from './verify/web-bot-auth/replay-guard.js';
export { defaultEd25519, nobleEd25519, webCryptoEd25519 } from './verify/web-bot-auth/ed25519.js';
export type { Ed25519Verify } from './verify/web-bot-auth/ed25519.js';
export { ed25519KeyFromJwk, jwkThumbprint } from './verify/web-bot-auth/jwk.js';
export type { Ed25519PublicKey } from './verify/web-bot-auth/jwk.js';
export { parseSignatureField, parseSignatureInput } from './verify/web-bot-auth/signature-input.js';
export type { ComponentIdentifier, ComponentParameters, MalformedSignatureInput, SignatureInput, SignatureParams } from './verify/web-bot-auth/signature-input.js';
export { createSignatureBase } from './verify/web-bot-auth/signature-base.js';
export type { SignatureBaseResult } from './verify/web-bot-auth/signature-base.js';
export type { HttpMessage } from './verify/web-bot-auth/components.js';
export { KEY_DIRECTORY_PATH, parseSignatureAgent } from './verify/web-bot-auth/signature-agent.js';
export type { SignatureAgentHeader, SignatureAgentMember } from './verify/web-bot-auth/signature-agent.js';
export { verifyDirectoryProof, DIRECTORY_SIGNATURE_TAG } from './verify/web-bot-auth/directory-signature.js';
export type { DirectoryProof, DirectoryProofInput } from './verify/web-bot-auth/directory-signature.js';
export { createApiHandler } from './api/handler.js';
export type { ApiHandler, ApiHandlerOptions } from './api/handler.js';
export { createFetchHandler } from './api/fetch.js';
export type { FetchHandler } from './api/fetch.js';
export type { ApiHeaderValue, ApiRequest, ApiResponse, BodyRead } from './api/types.js';
export type { AdminAuthenticator, AdminSession, CredentialCheck, CredentialStatus, Route, RouteAuth, RouteContext, RouteTable } from './api/route.js';
export { DEFAULT_LIMITS, resolveLimits } from './api/limits.js';
export type { ApiLimits } from './api/limits.js';
export { headerProblem, problem } from './api/problem.js';
export type { ProblemCode } from './api/problem.js';
export type { FieldError } from './field-error.js';
export { longerThan } from './json-string.js';
export { createMemoryProjectStore } from './api/projects.js';
export type { CreatedProject, MemoryProjectStore, Project, ProjectLookup, TokenRecord } from './api/projects.js';
export { constantTimeEqual, generateId, generateToken, sha256Hex, TOKEN_PREFIX } from './api/token.js';
export type { TokenHasher } from './api/token.js';
export { createRateLimiter } from './api/rate-limit.js';
export type { RateLimitDecision, RateLimiter, RateLimitOptions } from './api/rate-limit.js';
export { createOpenApiDocument, openApiErrorResponses } from './api/openapi.js';
export { headerValue } from './api/request-headers.js';
export { jsonBodyProblem, parseJsonBody } from './api/json-body.js';
export type { JsonBodyResult } from './api/json-body.js';
export { createMemoryProjectSettingsStore, createProjectRequestRules, DEFAULT_PROJECT_SETTINGS, parseProjectSettings, projectClientIpRule } from './api/project-settings.js';
export type {
  MemoryProjectSettingsStore,
  ParsedProjectSettings,
  ProjectRequestRules,
  ProjectRequestRulesCache,
  ProjectRequestRulesOptions,
  ProjectClientIpSettings,
  ProjectRobotsSettings,
  ProjectSettings,
  ProjectSettingsStore,
} from './api/project-settings.js';
export { createVisitRoutes } from './api/visit-routes.js';
export type { EventStreamOptions, VisitRoutesOptions } from './api/visit-routes.js';
export { createProjectSettingsRoutes } from './api/settings-routes.js';
export type { ProjectSettingsRoutesOptions } from './api/settings-routes.js';
export { openVisitEventStream } from './api/visit-event-stream.js';
export type { VisitEventStreamOptions } from './api/visit-event-stream.js';
export { createEventStreamBudget, DEFAULT_EVENT_STREAM_LIMITS } from './api/event-stream-budget.js';
export { createReadinessProbe, READINESS_DEADLINE_MS, READINESS_REUSE_MS } from './api/readiness.js';
export type { ReadinessProbeOptions } from './api/readiness.js';
export type { EventStreamAdmission, EventStreamBudget, EventStreamLimits, EventStreamSlot, ResolvedEventStreamLimits } from './api/event-stream-budget.js';
export { csvCell, toCsv } from './api/csv.js';
export type { CsvCell } from './api/csv.js';
export { isSecretHeader, parseVisit } from './visits/visit.js';
export type { JsonObject, Visit, VisitDecision, VisitHeaders, VisitParseResult } from './visits/visit.js';
export { FAILED_WRITE_MEMORY_MS, IDEMPOTENCY_WINDOW_MS, STORE_READY, VisitQueryError, VisitStoreUnavailableError } from './visits/visit-store.js';
export type {
  AgentSeen,
  EnrichedVisit,
  IdempotencyRecord,
  IdempotentAppendResult,
  IdempotentBatch,
  PathCount,
  PathCountsQuery,
  SeenQuery,
  StatsBucket,
  StatsDimension,
  StatsInterval,
  StatsQuery,
  StatsResult,
  StatsSeries,
  StoreHealth,
  StoredVisit,
  TimelineQuery,
  VisitFilter,
  VisitListener,
  VisitStore,
} from './visits/visit-store.js';
export { createMemoryVisitStore } from './visits/memory-store.js';
export type { MemoryVisitStore, MemoryVisitStoreOptions } from './visits/memory-store.js';
export { summarizeProjectVisits } from './visits/project-summary.js';
export type { ProjectVisitSummary, ProjectVisitSummaryOptions } from './visits/project-summary.js';
export { createVisitFanout } from './visits/fanout.js';
export type { VisitFanout } from './visits/fanout.js';
export { bucketStart, buildStatsResult, dimensionKey, INTERVAL_MS, matchesFilter, MAX_STATS_BUCKETS, mergeSeen, MAX_STATS_KEYS, pathWithoutQuery, statusKey, validateSeenQuery, validateStatsQuery } from './visits/stats.js';
export type { StatsCell } from './visits/stats.js';
export { createVisitEnricher, enrichVisit } from './visits/enrich.js';
export type { VisitEnricher, VisitEnricherOptions } from './visits/enrich.js';
export { classifyReferral, REFERRAL_CLASSES, REFERRAL_PRODUCTS } from './visits/referral.js';
export type { ReferralClass } from './visits/referral.js';
export { createRobotsRenderer, MAX_ROBOTS_TXT_BYTES } from './robots/render.js';
export type { RenderedRobotsTxt, RobotsRenderer, RobotsRendererOptions } from './robots/render.js';
export { parseRobotsOptions, resolveRobotsAgent, validateRobotsOptions } from './robots/options.js';
export type { ParsedRobotsOptions, RobotsAgentEntry, RobotsAgentRule, RobotsMarkers, RobotsTxtOptions, ValidatedAgentRule, ValidatedRobotsOptions } from './robots/options.js';
export { compileRobotsAgentRules } from './robots/agent-rules.js';
export type { AgentRobotsRule, AgentRobotsRuleSource, RobotsAgentRules } from './robots/agent-rules.js';
export { RobotsOptionsError } from './robots/errors.js';
export type { RobotsIssue, RobotsIssueCode } from './robots/errors.js';
export { encodeRobotsPath } from './robots/encode-path.js';
export { compileRobotsRules, normalizeRobotsPath, parseRobotsTxt } from './robots/match.js';
export type { ParsedRobotsTxt, RobotsMatch, RobotsMatcher, RobotsRule } from './robots/match.js';
export type { EncodedPath } from './robots/encode-path.js';
export { assertVisitSink, createFanoutSink } from './embed/visit-sink.js';
export type { SinkVisit, VisitSink } from './embed/visit-sink.js';
export { createHttpSink, parseRetryAfter, serializeVisit } from './embed/http-sink.js';
export type { HttpSink, HttpSinkOptions } from './embed/http-sink.js';
export { createStoreSink } from './embed/store-sink.js';
export type { StoreSink, StoreSinkOptions } from './embed/store-sink.js';
export type { DeliveryStats, OverflowPolicy, Timers } from './embed/delivery-queue.js';
export { createAccessPolicy } from './embed/access-policy.js';
export type { AccessPolicy, AccessPolicyOptions, DenyResponseOptions, PolicyResponse } from './embed/access-policy.js';
export type { RobotsSourceOptions } from './embed/robots-source.js';
export { readTextUpTo } from './embed/bounded-text.js';
export { describeFetchFailure } from './embed/fetch-failure.js';
export { createAgentwarden } from './embed/agentwarden.js';
export type { Agentwarden, AgentwardenOptions, AgentwardenResult, CheckRequest, RecordedResponse, RequestCheck } from './embed/agentwarden.js';
export { agentwardenResult, checkFetchRequest, createFetchMiddleware, detectPlatform, isAgentwarden, policyResponse, recordFetchResponse, recordsVisits, withAgentwarden } from './embed/fetch-middleware.js';
export { fetchHeaderMap, lowerCaseHeaderMap } from './embed/header-maps.js';
export { originFormPath, recordNodeResponse, sentHeaders } from './embed/node-response.js';
export type { NodeRequestLike, NodeResponseLike } from './embed/node-response.js';
export type { FetchMiddleware, FetchNext, FetchOutcome, FetchPlatform } from './embed/fetch-middleware.js';

// Alerts: per-project webhooks for new agents, spoofed-visit rises and robots.txt violations.
export { ALERT_EVENT_TYPES, createAlertMonitor, DEFAULT_SPOOFED_RISE_RULE, DEFAULT_UNLISTED_FIRST_VISIT_LIMIT, DEFAULT_VIOLATION_COOLDOWN_MS, TEST_EVENT_TYPE } from './alerts/alert-monitor.js';
export type { AlertEventType, AlertMonitor, AlertMonitorOptions, SpoofedRiseRule, UnlistedFirstVisitLimit } from './alerts/alert-monitor.js';
export { createAlertService } from './alerts/alert-service.js';
export type { AlertService, AlertServiceOptions, WebhookDirectory, WebhookInfo } from './alerts/alert-service.js';
export { createWebhookDispatcher, DEFAULT_WEBHOOK_RETRY, isRetriableStatus, retryDelayMs } from './alerts/webhook-delivery.js';
export type { WebhookDelivery, WebhookDeliveryLog, WebhookDispatcher, WebhookDispatcherOptions, WebhookEvent, WebhookRetryPolicy, WebhookTarget, WebhookTransport } from './alerts/webhook-delivery.js';
export { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, signWebhook, verifyWebhookSignature, WEBHOOK_DELIVERY_HEADER, WEBHOOK_EVENT_HEADER, WEBHOOK_SIGNATURE_HEADER } from './alerts/webhook-signature.js';
export type { WebhookSignatureCheck, WebhookSignatureFailure } from './alerts/webhook-signature.js';
export { createRobotsCheck } from './alerts/robots-check.js';
