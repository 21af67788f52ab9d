/**
 * Deep agent — `createDeepAgent` (and its headless form) and the function tools it is made
 * of, each usable on any upstream Agent: todos, files (in-memory, disk, routed and
 * SQLite/Postgres backends), sandboxed execution (bash on just-bash, Python on pyodide),
 * skills (SKILL.md), memory (AGENTS.md), summarization, spoken approval of sensitive tools
 * and the repair of dangling tool calls. Import it as `taskline/deep-agent`, or use the
 * `deepAgent` namespace of `taskline`. The `task` tools live in `taskline/delegation`.
 *
 * @packageDocumentation
 */
export { DEFAULT_PG_TIMEOUTS, type PostgresTimeouts } from '../core/sql/postgres.js';
export { createDeepAgent, DeepAgent, type DeepAgentOptions } from './agent.js';
export { type ApprovalEvent, ApprovalGate, type ApprovalGateEvents } from './approval/guard.js';
export { APPROVAL_RECORD_TYPE, APPROVAL_STAGE, ApprovalResult } from './approval/supervisor.js';
export type {
  ApprovalDecision,
  ApprovalPolicy,
  ApprovalRequest,
  ApprovalToolOptions,
  DelegationApprover,
  SupervisorCallback,
} from './approval/types.js';
export { repairDanglingToolCalls } from './dangling.js';
export {
  createHeadlessDeepAgent,
  type HeadlessDeepAgent,
  type HeadlessDeepAgentOptions,
} from './headless.js';
export { loadMemory, type MemoryFile, type MemoryOptions } from './memory.js';
export { type SummarizationOptions, type Summarized, Summarizer } from './summarize.js';
export {
  BashSandbox,
  type BashSandboxOptions,
  type ExecOptions,
  type ExecResult,
} from './tools/execute/bash.js';
export { LocalShell, type LocalShellOptions } from './tools/execute/local.js';
export {
  type PythonRunOptions,
  type PythonRunResult,
  PythonSandbox,
  type PythonSandboxOptions,
} from './tools/execute/python.js';
export { type ExecutionOptions, ExecutionSandbox } from './tools/execute/sandbox.js';
export {
  createExecutionTools,
  type ExecutionTools,
  type ExecutionToolsOptions,
} from './tools/execute/tools.js';
export {
  type FileBackend,
  FileError,
  type FileErrorCode,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
} from './tools/files/backend.js';
export {
  CompositeBackend,
  type CompositeBackendOptions,
} from './tools/files/backends/composite.js';
export {
  DiskBackend,
  type DiskBackendHooks,
  type DiskBackendOptions,
} from './tools/files/backends/disk.js';
export { MemoryBackend, type MemoryBackendOptions } from './tools/files/backends/memory.js';
export {
  StoreFileBackend,
  type StoreNamespaceOptions,
} from './tools/files/backends/store-common.js';
export {
  PostgresFileStore,
  type PostgresFileStoreOptions,
} from './tools/files/backends/store-postgres.js';
export {
  SqliteFileStore,
  type SqliteFileStoreOptions,
} from './tools/files/backends/store-sqlite.js';
export { FileToolsState } from './tools/files/state.js';
export {
  createFileTools,
  type FileToolName,
  type FileTools,
  type FileToolsOptions,
} from './tools/files/tools.js';
export type { Skill } from './tools/skills/skill.js';
export {
  createSkillTools,
  loadSkills,
  type SkillTools,
  type SkillToolsOptions,
} from './tools/skills/tools.js';
export {
  createTodoTools,
  type Todo,
  type TodoChangeEvent,
  type TodoInput,
  TodoList,
  type TodoListEvents,
  type TodoListOptions,
  type TodoStatus,
  type TodoTools,
  type TodoToolsOptions,
} from './tools/todos.js';
