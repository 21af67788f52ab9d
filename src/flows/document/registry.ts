/**
 * What a flow document may name besides the prebuilt tasks: the app's own tasks, pick
 * functions, escalations and flows, by name. The same registry turns a flow built in code
 * back into a document (`toData`), naming each part it finds here.
 */
import type { AnyStepSource } from '../infer.js';
import type { Escalate, FlowLike, PickNext } from '../types.js';

/** A pick function a document names with `next: { pick: name, to: [...] }`. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds picks of every answer type
export type PickFunction = PickNext<any, string>['pick'];

/** The parts of an app a flow document may name. */
export interface FlowRegistry {
  /** Task definitions by name (`defineTask`, a configured prebuilt task, `collectDigits`, a menu, a task factory). */
  readonly tasks?: Readonly<Record<string, AnyStepSource>>;
  /** Branch functions by name: `next: { pick: name, to: [...] }` (they may be async). */
  readonly picks?: Readonly<Record<string, PickFunction>>;
  /** Escalations by name: `onFailure: { escalate: name }`. */
  // biome-ignore lint/suspicious/noExplicitAny: escalations of every answer type
  readonly escalations?: Readonly<Record<string, Escalate<any>>>;
  /** Flows by name, run as a step: `flow: name`. */
  readonly flows?: Readonly<Record<string, FlowLike<unknown>>>;
}

/** The name an object has in one of the registry's sections, by identity. */
export function nameIn(
  section: Readonly<Record<string, unknown>> | undefined,
  value: unknown,
): string | undefined {
  if (!section) return undefined;
  for (const [name, entry] of Object.entries(section)) {
    if (entry === value) return name;
  }
  return undefined;
}
