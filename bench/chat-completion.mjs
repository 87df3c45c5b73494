// The body an OpenAI-compatible server answers a chat completion with: the scripted
// benchmark models' one shape (bench/load-model.mjs, bench/bulk-cancel.mjs).

/** Writes `message` to `res` as a finished, non-streamed chat completion of `model`. */
export function answerCompletion(res, model, message, usage = { prompt_tokens: 10, completion_tokens: 5 }) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 0, model, choices: [{ index: 0, finish_reason: "stop", message }], usage }));
}
