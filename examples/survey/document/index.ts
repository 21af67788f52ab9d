/**
 * The survey run from its flow document (../survey.flow.yaml) instead of its code
 * (../flow.ts): the same call module, the same scenarios (the *.scenario.yaml files here
 * link to ../*.scenario.yaml), the same checkpoints (flow "survey", version 1).
 *
 *   npx taskline test examples/survey            # both forms
 *   npx taskline run examples/survey/document
 */
import { fileURLToPath } from 'node:url';
import { defineCallModule } from 'taskline';
import { loadFlow } from 'taskline/flows';
import { type SurveyAnswers, SurveyCall, type SurveyOutcome, surveyModule } from '../index.js';
import { registry } from '../registry.js';

/** The survey document, loaded and checked once (a bad document fails here, at start-up). */
export const surveyDocument = loadFlow<SurveyAnswers>(
  fileURLToPath(new URL('../survey.flow.yaml', import.meta.url)),
  { registry },
);

/** The survey module, running the document form. */
export const surveyDocumentModule = defineCallModule<SurveyOutcome>({
  ...surveyModule,
  name: 'survey (flow document)',
  description: `${surveyModule.description} Loaded from survey.flow.yaml.`,
  createCall(setup) {
    const runOptions = setup?.checkpoints ? { checkpoints: setup.checkpoints } : {};
    const agent = new SurveyCall(runOptions, surveyDocument, setup?.transferer);
    return { agent, result: () => agent.outcome };
  },
});

export default surveyDocumentModule;
