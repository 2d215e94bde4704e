// @openai/agents with its default model provider, which speaks the
// Responses API. The framework runs the tools itself: the runner's
// recording tools see the arguments the gateway released. Tracing is off
// (setTracingDisabled and OPENAI_AGENTS_DISABLE_TRACING=1): by default the
// SDK exports traces to the vendor directly, around the gateway.
import OpenAI from 'openai';
import { Agent, Runner, OpenAIProvider, tool, setTracingDisabled } from '@openai/agents';
import { run, toolSchemas } from './harness.mjs';

setTracingDisabled(true);

function runner(url) {
  const openAIClient = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused-with-the-mock', maxRetries: 0 });
  return new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses: true }), tracingDisabled: true });
}

function agent(tools) {
  return new Agent({
    name: 'e2e',
    instructions: 'You are a test agent.',
    model: 'mock',
    tools: Object.entries(toolSchemas).map(([name, parameters]) =>
      tool({ name, description: name, parameters, strict: false, execute: async (input) => tools[name](input) })),
  });
}

await run({
  async agentRun(url, prompt, stream, tools, onDelta = () => {}) {
    const r = runner(url);
    if (!stream) {
      const result = await r.run(agent(tools), prompt, { maxTurns: 4 });
      return { text: result.finalOutput ?? '' };
    }
    const result = await r.run(agent(tools), prompt, { stream: true, maxTurns: 4 });
    for await (const ev of result) {
      if (ev.type === 'raw_model_stream_event' && ev.data.type === 'output_text_delta') onDelta(ev.data.delta);
    }
    await result.completed;
    if (result.error) throw result.error;
    return { text: result.finalOutput ?? '' };
  },
});
