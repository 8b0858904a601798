// Interop client: the official TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) against
// an MCP server spoken to over stdio or Streamable HTTP, pinned to protocol 2026-07-28.
//
// Usage: node modern-client.mjs [--] SERVER_COMMAND [ARGS...]
//        node modern-client.mjs --url URL   (StreamableHTTPClientTransport, e.g. http://HOST:PORT/mcp)
//
// Connects with versionNegotiation { mode: { pin: '2026-07-28' } } (a server/discover at connect,
// then the per-request _meta envelope), lists tools, calls tools, reads a resource, gets prompts,
// and completes a multi-round-trip elicitation: test_input_required_result_elicitation answers
// `input_required`, which the SDK fulfils through the registered elicitation/create handler before
// retrying the call. One JSON line per check on stdout; exit 0 only if all passed.

import {
    commonChecks,
    expect,
    importPackage,
    main,
    clientTarget,
    passthroughEnv,
    STEP_TIMEOUT_MS,
    texts,
    withTimeout
} from './common.mjs';

const MODERN = '2026-07-28';
const PACKAGE = '@modelcontextprotocol/client';

const target = clientTarget(
    process.argv.slice(2),
    'usage: node modern-client.mjs [--] SERVER_COMMAND [ARGS...] | --url URL'
);

await main(async checks => {
    const { Client } = await importPackage(PACKAGE, '.');

    const elicitations = [];
    let reply = {};
    const client = new Client(
        { name: 'mcpkit-interop-ts-modern', version: '1.0.0' },
        {
            capabilities: { elicitation: {} },
            versionNegotiation: { mode: { pin: MODERN } },
            inputRequired: { autoFulfill: true }
        }
    );
    client.setRequestHandler('elicitation/create', async request => {
        elicitations.push(request.params);
        process.stderr.write(`modern-client: elicitation request: ${JSON.stringify(request.params)}\n`);
        return { action: 'accept', content: { ...reply } };
    });

    let transport;
    if (target.kind === 'http') {
        const { StreamableHTTPClientTransport } = await importPackage(PACKAGE, '.');
        transport = new StreamableHTTPClientTransport(target.url);
    } else {
        const { StdioClientTransport, getDefaultEnvironment } = await importPackage(PACKAGE, './stdio');
        transport = new StdioClientTransport({
            command: target.command,
            args: target.args,
            env: { ...getDefaultEnvironment(), ...passthroughEnv() },
            stderr: 'inherit'
        });
    }
    await withTimeout(client.connect(transport, { timeout: STEP_TIMEOUT_MS }), STEP_TIMEOUT_MS, 'connect');
    try {
        const version = client.getNegotiatedProtocolVersion();
        const discover = client.getDiscoverResult();
        checks.record('connect', version === MODERN && client.getProtocolEra() === 'modern', {
            protocol_version: version,
            expected_version: MODERN,
            era: client.getProtocolEra(),
            supported_versions: discover?.supportedVersions,
            server_info: client.getServerVersion()
        });

        await commonChecks(client, checks, { elicitationTool: 'test_input_required_result_elicitation' });

        await checks.run('elicitation', async () => {
            elicitations.length = 0;
            reply = { name: 'Alice' };
            const result = await client.callTool(
                { name: 'test_input_required_result_elicitation' },
                { timeout: STEP_TIMEOUT_MS }
            );
            expect(elicitations.length === 1, `elicitation handler ran ${elicitations.length} times`);
            const [request] = elicitations;
            expect(request.message === 'What is your name?', `message ${JSON.stringify(request.message)}`);
            expect(
                request.requestedSchema?.properties?.name !== undefined,
                `requestedSchema lacks name: ${JSON.stringify(request.requestedSchema)}`
            );
            expect(!result.isError, `isError result: ${JSON.stringify(result)}`);
            const got = texts(result.content);
            expect(
                got.length === 1 && got[0] === 'Hello, Alice!',
                `unexpected content: ${JSON.stringify(result.content)}`
            );
            return { text: got[0] };
        });
    } finally {
        await withTimeout(client.close(), 5_000, 'close').catch(error => {
            process.stderr.write(`modern-client: close: ${error}\n`);
        });
    }
});
