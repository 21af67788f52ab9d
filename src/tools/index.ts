export {
  type FileBackend,
  FileError,
  type FileErrorCode,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
  type SkippedLine,
} from './files/backend.js';
export {
  CompositeBackend,
  type CompositeBackendOptions,
} from './files/backends/composite.js';
export {
  DEFAULT_DISK_MAX_TOTAL_BYTES,
  DiskBackend,
  type DiskBackendHooks,
  type DiskBackendOptions,
} from './files/backends/disk.js';
export {
  checkSizeCaps,
  checkTextContent,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
} from './files/backends/limits.js';
export { MemoryBackend, type MemoryBackendOptions } from './files/backends/memory.js';
export {
  StoreFileBackend,
  type StoreNamespaceOptions,
} from './files/backends/store-common.js';
export {
  PostgresFileStore,
  type PostgresFileStoreOptions,
} from './files/backends/store-postgres.js';
export { SqliteFileStore, type SqliteFileStoreOptions } from './files/backends/store-sqlite.js';
export {
  DEFAULT_MAX_LINE_CHARS,
  DEFAULT_READ_LIMIT,
  formatReadPage,
  splitLines,
} from './files/format.js';
export {
  type CompiledGlob,
  compileGlob,
  createPathFilter,
  splitGlob,
} from './files/glob.js';
export {
  compileGrepRegex,
  type GrepRegex,
  MAX_REGEX_LINE_CHARS,
  MAX_REGEX_PATTERN_LENGTH,
  MAX_REGEX_PROGRAM_SIZE,
  MAX_REGEX_REPEAT,
} from './files/grep-regex.js';
export {
  isWithin,
  MAX_PATH_LENGTH,
  MAX_SEGMENT_BYTES,
  normalizePath,
} from './files/paths.js';
export {
  checkMaxCount,
  compileSearcher,
  MAX_LITERAL_PATTERN_LENGTH,
  MAX_MATCH_TEXT_CHARS,
  SearchBudget,
  type TextSearcher,
} from './files/search.js';
export { FileToolsState } from './files/state.js';
export {
  createFileTools,
  DEFAULT_GREP_MAX_COUNT,
  DEFAULT_GREP_TIMEOUT_MS,
  DEFAULT_LARGE_RESULT_CHARS,
  type FileToolName,
  type FileTools,
  type FileToolsOptions,
  LARGE_RESULTS_DIR,
  toToolError,
} from './files/tools.js';
export {
  createTodoTools,
  DEFAULT_MAX_TODO_CHARS,
  DEFAULT_MAX_TODOS,
  type Todo,
  type TodoChangeEvent,
  type TodoInput,
  TodoList,
  type TodoListEvents,
  type TodoListOptions,
  type TodoStatus,
  type TodoTools,
  type TodoToolsOptions,
} from './todos.js';
