import type { voice } from '@livekit/agents';
import type { Outcome } from '../outcome.js';
import type { TaskDefinition } from '../tasks/define.js';
import type { FlowLike } from './types.js';

/**
 * Type-level facts about one declared step, collected by the builder so the flow's result
 * type can be computed: its id, value, whether it may be skipped, and its `next` shape
 * (a literal target, `~seq` for "the next declared step", or `~branch`).
 */
export interface StepInfo {
  id: string;
  value: unknown;
  optional: boolean;
  next: string;
}

/** Anything `step()` accepts as a source (checked more precisely by {@link SourceValue}). */
export type AnyStepSource =
  | { readonly name: string; create(): voice.AgentTask<Outcome<unknown>> }
  | { readonly kind: 'flow'; readonly name: string }
  | (() => voice.AgentTask<Outcome<unknown>>);

/** The value type a step source produces. */
export type SourceValue<S> =
  S extends FlowLike<infer R>
    ? R
    : S extends TaskDefinition<infer T>
      ? T
      : S extends { create(): voice.AgentTask<Outcome<infer T>> }
        ? T
        : S extends () => voice.AgentTask<Outcome<infer T>>
          ? T
          : never;

/** Whether options make a step's key optional (skippable, or skipped on failure). */
export type IsOptional<O> = O extends { skippable: true }
  ? true
  : O extends { onFailure: 'skip' }
    ? true
    : false;

/** The `next` shape of a step's options, as {@link StepInfo.next}. */
export type NextShape<O> = O extends { next: infer N }
  ? N extends string
    ? N
    : '~branch'
  : '~seq';

/** Appends a step, pointing a preceding `~seq` step at it. */
export type AddStep<Steps extends StepInfo[], S extends StepInfo> = Steps extends [
  ...infer Init extends StepInfo[],
  infer Last extends StepInfo,
]
  ? [
      ...Init,
      Last['next'] extends '~seq'
        ? { id: Last['id']; value: Last['value']; optional: Last['optional']; next: S['id'] }
        : Last,
      S,
    ]
  : [S];

type Find<Steps extends StepInfo[], Id> = Extract<Steps[number], { id: Id }>;

/**
 * Step ids every run passes through: from the first step, follow steps whose `next` is a
 * single target; stop at a branch, at `'end'`, or at a step already seen. Optional steps
 * on the way are walked through but not collected.
 */
type Spine<Steps extends StepInfo[], Id, Seen = never> = [Id] extends [Seen]
  ? never
  : Find<Steps, Id> extends infer I extends StepInfo
    ? [I] extends [never]
      ? never
      :
          | (I['optional'] extends true ? never : I['id'])
          | (I['next'] extends '~branch' | '~seq' | 'end'
              ? never
              : Spine<Steps, I['next'], Seen | Id>)
    : never;

type Required<Steps extends StepInfo[]> = Steps extends [
  infer First extends StepInfo,
  ...StepInfo[],
]
  ? Spine<Steps, First['id']>
  : never;

/** Drops keys whose value is `void`/`undefined` (steps that only speak). */
// biome-ignore lint/suspicious/noConfusingVoidType: speak-only steps resolve Outcome<void>
type Valued<Steps extends StepInfo[]> = Exclude<Steps[number], { value: void }>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * The result type of a flow: a key per step holding its value, optional for steps that
 * may be skipped or not reached (anything after a branch), absent for speak-only steps.
 */
export type FlowValue<Steps extends StepInfo[]> = Simplify<
  {
    [S in Valued<Steps> as S['id'] extends Required<Steps> ? S['id'] : never]: S['value'];
  } & {
    [S in Valued<Steps> as S['id'] extends Required<Steps> ? never : S['id']]?: S['value'];
  }
>;

/** Ids already declared, for duplicate detection. */
export type StepIds<Steps extends StepInfo[]> = Steps[number]['id'];
