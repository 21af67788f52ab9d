/**
 * The deep agent for voice: `createDeepAgent` and its parts — sandboxed execution (bash on
 * just-bash, Python on pyodide), skills, memory, summarization, spoken approval and the repair
 * of dangling tool calls.
 *
 * @packageDocumentation
 */
export { BackendFs } from '../tools/execute/backend-fs.js';
export {
  BashSandbox,
  type BashSandboxOptions,
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  type ExecOptions,
  type ExecResult,
} from '../tools/execute/bash.js';
export { LocalShell, type LocalShellOptions } from '../tools/execute/local.js';
export {
  DEFAULT_MAX_SYNC_BYTES,
  type PythonRunOptions,
  type PythonRunResult,
  PythonSandbox,
  type PythonSandboxOptions,
} from '../tools/execute/python.js';
export { type ExecutionOptions, ExecutionSandbox } from '../tools/execute/sandbox.js';
export {
  createExecutionTools,
  type ExecutionTools,
  type ExecutionToolsOptions,
  formatRun,
} from '../tools/execute/tools.js';
export { fitLargeResult } from '../tools/files/large-result.js';
export { parseSkill, type Skill, SkillFrontMatter } from '../tools/skills/skill.js';
export {
  createSkillTools,
  loadSkills,
  type SkillTools,
  type SkillToolsOptions,
  skillsPrompt,
} from '../tools/skills/tools.js';
export {
  createDeepAgent,
  DeepAgent,
  type DeepAgentOptions,
} from './agent.js';
export { type ApprovalAnswer, parseApproval } from './approval/caller.js';
export {
  type ApprovalEvent,
  ApprovalGate,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  describeCall,
} from './approval/guard.js';
export { APPROVAL_RECORD_TYPE, APPROVAL_STAGE, ApprovalResult } from './approval/supervisor.js';
export type {
  ApprovalDecision,
  ApprovalPolicy,
  ApprovalRequest,
  ApprovalToolOptions,
  DelegationApprover,
  SupervisorCallback,
} from './approval/types.js';
export { CANCELLED_OUTPUT, repairDanglingToolCalls } from './dangling.js';
export {
  createHeadlessDeepAgent,
  type HeadlessDeepAgent,
  type HeadlessDeepAgentOptions,
} from './headless.js';
export {
  DEFAULT_MEMORY_PATH,
  loadMemory,
  type MemoryFile,
  type MemoryOptions,
  memoryPrompt,
} from './memory.js';
export { assemblePrompt, type PromptParts } from './prompt.js';
export {
  DEFAULT_CONTEXT_WINDOW_TOKENS,
  deterministicSummary,
  estimateTokens,
  type SummarizationOptions,
  type Summarized,
  Summarizer,
} from './summarize.js';
