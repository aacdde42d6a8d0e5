/**
 * tap-collections-sdk: the Tap Resolution Partner API and the Collections Gateway API.
 *
 * @packageDocumentation
 * @module tap-collections-sdk
 */

export { amountFromNgwee, type CollectionAmountCheck, checkCollectionAmount } from './collections/amount.js';
export { CollectionsClient, type CollectionsClientOptions } from './collections/client.js';
export { COLLECTIONS_VALIDATION_ERROR } from './collections/envelope.js';
export { isZambianMobileNumber, normalizeZambianMobileNumber, type PhoneNumberFormat } from './collections/phone-number.js';
export { POLL_DEFAULTS, POLL_GROWTH, POLL_JITTER, type PollOptions, pollPauseMs } from './collections/poller.js';
export type { RecoverOptions } from './collections/recover.js';
export {
  type CollectionDetails,
  CollectionDetailsSchema,
  type CollectionInput,
  CollectionInputSchema,
  type CollectionStatus,
  CollectionStatusSchema,
  type HealthStatus,
  type InitiatedCollection,
  type KnownCollectionStatus,
} from './collections/schemas.js';
export type { SettlementWorker, SettlementWorkerOptions } from './collections/settlement-worker.js';
export { type SettlementBoundInputs, settlementBoundMs } from './collections/settlement-worker-options.js';
export { DEFAULT_STATUS_WORDS, type StatusWordsOption } from './collections/status-words.js';
export type { WaitForSettlementOptions } from './collections/wait-for-settlement.js';
export type { ApiKeySource, ClientOptions, FetchFunction, RequestOptions, ResponseEvent } from './core/config.js';
export type { ConnectionFailureReason } from './core/connection-failure.js';
export {
  ApiError,
  type ApiErrorCode,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  ConflictError,
  ConnectionError,
  type FieldError,
  InternalServerError,
  JournalError,
  type KnownErrorCode,
  NotFoundError,
  PaymentContradictionError,
  PermissionDeniedError,
  PollTimeoutError,
  RateLimitError,
  RedirectError,
  RequestValidationError,
  ResponseValidationError,
  type ServiceName,
  TapCollectionsError,
  TimeoutError,
  UnknownOutcomeError,
  type UnknownOutcomeSeen,
  UnprocessableEntityError,
  type ValidationIssue,
} from './core/errors.js';
export type {
  AttemptInfo,
  Instrumentation,
  OperationInfo,
  SettlementWorkerEvent,
  SettlementWorkerView,
  WorkerCheckEvent,
  WorkerContradictionEvent,
  WorkerPausedEvent,
  WorkerSettledEvent,
} from './core/instrumentation.js';
export type { Logger, LogLevel } from './core/logger.js';
export type { ApiResponse, RawRequestOptions } from './core/raw-request.js';
export { maskPhoneNumber } from './core/redact.js';
export type { HttpMethod } from './core/transport.js';
export type { OpenEnum } from './core/validation.js';
export { SDK_VERSION } from './core/version.js';
export {
  allocateBudget,
  type BudgetAllocation,
  type BudgetGrant,
  type BudgetHolder,
  type BudgetRequest,
  type BudgetState,
  budgetRequestProblem,
  createReserve,
  FAIR_TURN_MS,
  fairShares,
  handedOut,
  newBudgetState,
} from './journal/budget.js';
export {
  type ContradictingAnswer,
  isOpenPaymentState,
  type LeaseRequest,
  type NewPaymentRecord,
  OPEN_PAYMENT_STATES,
  type PaymentChange,
  type PaymentContradiction,
  type PaymentDeployment,
  type PaymentError,
  type PaymentEvent,
  type PaymentFilter,
  type PaymentJournal,
  type PaymentRecord,
  type PaymentState,
  type PaymentTransition,
  sendWindowOf,
  UNKNOWN_SEND_WINDOW_MS,
  withDecidableAt,
} from './journal/journal.js';
export { MemoryJournal, type MemoryJournalOptions } from './journal/memory.js';
export { type SaleOutcome, saleOutcome } from './journal/outcome.js';
export { TapClient, type TapClientOptions } from './tap/client.js';
export { TAP_ALREADY_EXISTS } from './tap/envelope.js';
export { mobileNumberFor } from './tap/mobile-number.js';
export {
  type CustomerQuery,
  type CustomerQueryInput,
  CustomerQueryInputSchema,
  CustomerQuerySchema,
  type MobileNumber,
  MobileNumberSchema,
} from './tap/schemas.js';
