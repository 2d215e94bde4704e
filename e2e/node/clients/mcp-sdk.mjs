// The official TypeScript MCP SDK (@modelcontextprotocol/sdk) as a client
// of the gateway's /mcp/{server} route, over Streamable HTTP, for
// e2e/mcp_test.go. It plays the scenarios and prints ONE JSON object of
// what it observed; the Go test owns the expectations.
//
// Environment:
//   GATEWAY_URL   root URL of a gateway serving the MCP server "fs"
//   MCP_SESSION   the Agent-Hooks-Session header the client sends
//   E2E_MCP_CALLS JSON array of {name, arguments}: the tools/call requests,
//                 in order

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL('/mcp/fs', process.env.GATEWAY_URL);
const calls = JSON.parse(process.env.E2E_MCP_CALLS ?? '[]');

/** Returns what an application learns of a call: its result or its error. */
async function observe(fn) {
  try {
    const r = await fn();
    return {
      isError: r.isError === true,
      text: (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(''),
      meta: r._meta ?? null,
      error: null,
    };
  } catch (err) {
    return { error: `${err.code ?? ''} ${err.message ?? err}` };
  }
}

const report = { calls: [] };
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { 'Agent-Hooks-Session': process.env.MCP_SESSION } },
});
const client = new Client({ name: 'hooks-gateway-e2e', version: '1.0.0' });
try {
  await client.connect(transport);
  report.protocolVersion = transport.protocolVersion ?? null;
  report.mcpSession = transport.sessionId !== undefined;
  report.server = client.getServerVersion()?.name ?? null;
  report.tools = (await client.listTools()).tools.map((t) => t.name);
  for (const c of calls) {
    report.calls.push(await observe(() => client.callTool({ name: c.name, arguments: c.arguments })));
  }
  await transport.terminateSession();
  await client.close();
  report.error = null;
} catch (err) {
  report.error = String(err?.stack ?? err);
}
process.stdout.write(JSON.stringify(report) + '\n');
