import { TasklineError } from '../../core/errors.js';
import { MemoryCheckpointStore } from './memory.js';
import { PostgresCheckpointStore } from './postgres.js';
import { SqliteCheckpointStore } from './sqlite.js';
import type { CheckpointStore } from './types.js';

export { MemoryCheckpointStore } from './memory.js';
export { type PostgresCheckpointOptions, PostgresCheckpointStore } from './postgres.js';
export { type SqliteCheckpointOptions, SqliteCheckpointStore } from './sqlite.js';
export {
  type Checkpoint,
  CheckpointConflictError,
  type CheckpointKey,
  type CheckpointStore,
  type FlowState,
  isCheckpointConflict,
} from './types.js';

/** Where the embedded default store keeps its file, relative to the working directory. */
export const DEFAULT_CHECKPOINT_PATH = '.taskline/checkpoints.db';

/** Which checkpoint store to open; SQLite (embedded, a file path) is the default. */
export type CheckpointConfig =
  | { kind: 'memory' }
  | { kind: 'sqlite'; path?: string; table?: string }
  | { kind: 'postgres'; connectionString: string; table?: string };

/**
 * Opens the store a config names: `{ kind: 'sqlite', path }` by default (the file is
 * created with its directory), memory, or Postgres. Drivers load only when asked for.
 */
export async function openCheckpointStore(
  config: CheckpointConfig = { kind: 'sqlite' },
): Promise<CheckpointStore> {
  switch (config.kind) {
    case 'memory':
      return new MemoryCheckpointStore();
    case 'sqlite':
      return SqliteCheckpointStore.open({
        path: config.path ?? DEFAULT_CHECKPOINT_PATH,
        table: config.table,
      });
    case 'postgres':
      return PostgresCheckpointStore.connect({
        connectionString: config.connectionString,
        table: config.table,
      });
    default:
      throw new TasklineError(
        'invalid_argument',
        `Unknown checkpoint store ${JSON.stringify(config)}: use kind "sqlite", "memory" or "postgres".`,
      );
  }
}
