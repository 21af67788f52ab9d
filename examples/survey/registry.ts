/**
 * What survey.flow.yaml names besides prebuilt tasks: the transfer a caller who asks for a
 * person gets (`repair.human.escalate`). `npx taskline flow check examples/survey/survey.flow.yaml
 * --registry examples/survey/registry.ts`
 */
import type { FlowRegistry } from 'taskline/flows';
import { toSurveyTeam } from './flow.js';

/** The survey document's registry. */
export const registry: FlowRegistry = { escalations: { toSurveyTeam } };

export default registry;
