// The openai JS SDK's Responses stream helper in the loop an application
// writes around it, for TestOpenAIStreamHelperCapture (not a harness
// client): every turn streams with client.responses.stream(...) and
// awaits finalResponse(); the final response's output items are fed back
// as the helper returns them (its function_call items carry
// parsed_arguments, its output_text parts parsed), with the tool's output
// after each call, then a follow-up user turn. Stateless (store: false),
// the whole conversation in input.
//
// Environment: GATEWAY_URL (root URL, no /v1) and E2E_PROMPTS (weather,
// weatherResult, plain). Prints one JSON object: {calls: [{id, name,
// args}], answers: [the text of each answer without a tool call], error}.
import OpenAI from 'openai';
import { describe, toolSchemas } from './harness.mjs';

const prompts = JSON.parse(process.env.E2E_PROMPTS ?? '{}');
const client = new OpenAI({ baseURL: `${process.env.GATEWAY_URL}/v1`, apiKey: 'unused-with-the-mock', maxRetries: 0 });
const tools = [{ type: 'function', name: 'get_weather', parameters: toolSchemas.get_weather, strict: false }];

/** One streamed turn: the helper's final, parsed response. */
function turn(input) {
  return client.responses.stream({ model: 'mock', input, tools, store: false }).finalResponse();
}

/** Runs turns until an answer calls no tool, feeding back each output. */
async function untilAnswered(input, report) {
  for (;;) {
    const response = await turn(input);
    input.push(...response.output);
    const calls = response.output.filter((i) => i.type === 'function_call');
    if (calls.length === 0) return response.output_text;
    if (report.calls.length >= 4) throw new Error('the model keeps calling tools');
    for (const c of calls) {
      report.calls.push({ id: c.call_id, name: c.name, args: c.arguments });
      input.push({ type: 'function_call_output', call_id: c.call_id, output: prompts.weatherResult });
    }
  }
}

const report = { calls: [], answers: [], error: null };
try {
  const input = [{ role: 'user', content: prompts.weather }];
  report.answers.push(await untilAnswered(input, report));
  input.push({ role: 'user', content: prompts.plain });
  report.answers.push(await untilAnswered(input, report));
} catch (err) {
  report.error = describe(err);
}
process.stdout.write(JSON.stringify(report) + '\n');
