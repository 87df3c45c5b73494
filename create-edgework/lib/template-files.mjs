// The template's files that are copies of this repository's own (so the project's
// example and demo are the ones the repository tests): scripts/sync-template.mjs
// copies them in before `npm pack`; the template in git holds the rest.

/** template path → path in the edgework repository */
export const FROM_REPOSITORY = {
  "workers/triage.worker": "workers/triage.worker",
  "workers/summarizer.worker": "workers/summarizer.worker",
  "workers/labeler.worker": "workers/labeler.worker",
  "workers/triggers.yaml": "workers/triggers.yaml",
  "workers/models.yaml": "workers/models.yaml",
  "scripts/demo/start.mjs": "scripts/demo/start.mjs",
  "scripts/demo/demo.mjs": "scripts/demo/demo.mjs",
  "scripts/demo/demo-model.mjs": "scripts/demo/demo-model.mjs",
  "scripts/demo/fake-github.mjs": "scripts/demo/fake-github.mjs",
  "scripts/demo/local-app.mjs": "scripts/demo/local-app.mjs",
  ".dev.vars.example": ".dev.vars.example",
};
