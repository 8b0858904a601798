// Interop client: the official TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32.2) against an MCP
// server spoken to over stdio, Streamable HTTP or the deprecated HTTP+SSE transport, on the
// 2025-11-25 initialize handshake.
//
// Usage: node legacy-client.mjs [--] SERVER_COMMAND [ARGS...]
//        node legacy-client.mjs --url URL   (StreamableHTTPClientTransport, e.g. http://HOST:PORT/mcp)
//        node legacy-client.mjs --sse URL   (SSEClientTransport, e.g. http://HOST:PORT/sse)
//
// Connects with Client + the transport chosen, lists tools, calls tools, reads a resource, gets
// prompts, and answers the server-to-client elicitation/create that test_elicitation sends while
// its tools/call is in flight. One JSON line per check on stdout; exit 0 only if all passed.

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

const LEGACY = '2025-11-25';
const SDK = '@modelcontextprotocol/sdk';

const target = clientTarget(
    process.argv.slice(2),
    'usage: node legacy-client.mjs [--] SERVER_COMMAND [ARGS...] | --url URL | --sse URL',
    { sse: true }
);

await main(async checks => {
    const { Client } = await importPackage(SDK, './client/index.js');
    const { StdioClientTransport, getDefaultEnvironment } = await importPackage(SDK, './client/stdio.js');
    const { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } = await importPackage(SDK, './types.js');

    const elicitations = [];
    let reply = {};
    const client = new Client(
        { name: 'mcpkit-interop-ts-legacy', version: '1.0.0' },
        { capabilities: { elicitation: {} } }
    );
    client.setRequestHandler(ElicitRequestSchema, async request => {
        elicitations.push(request.params);
        process.stderr.write(`legacy-client: elicitation request: ${JSON.stringify(request.params)}\n`);
        return { action: 'accept', content: { ...reply } };
    });

    let transport;
    if (target.kind === 'http') {
        const { StreamableHTTPClientTransport } = await importPackage(SDK, './client/streamableHttp.js');
        transport = new StreamableHTTPClientTransport(target.url);
    } else if (target.kind === 'sse') {
        const { SSEClientTransport } = await importPackage(SDK, './client/sse.js');
        transport = new SSEClientTransport(target.url);
    } else {
        transport = new StdioClientTransport({
            command: target.command,
            args: target.args,
            env: { ...getDefaultEnvironment(), ...passthroughEnv() },
            stderr: 'inherit'
        });
    }
    // The SDK offers LATEST_PROTOCOL_VERSION in initialize and hands the version the server chose
    // to the transport's optional setProtocolVersion hook (HTTP uses it for its header); stdio has
    // none. Wrap it (keeping the transport's own) to observe the negotiated version.
    let negotiated;
    const ownSetProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = version => {
        negotiated = version;
        ownSetProtocolVersion?.(version);
    };
    await withTimeout(client.connect(transport, { timeout: STEP_TIMEOUT_MS }), STEP_TIMEOUT_MS, 'connect');
    try {
        checks.record('connect', negotiated === LEGACY, {
            offered_version: LATEST_PROTOCOL_VERSION,
            protocol_version: negotiated,
            expected_version: LEGACY,
            server_info: client.getServerVersion()
        });

        await commonChecks(client, checks, { elicitationTool: 'test_elicitation' });

        await checks.run('elicitation', async () => {
            elicitations.length = 0;
            reply = { username: 'alice', email: 'alice@example.com' };
            const result = await client.callTool(
                { name: 'test_elicitation', arguments: { message: 'Please provide your details' } },
                undefined,
                { timeout: STEP_TIMEOUT_MS }
            );
            expect(elicitations.length === 1, `elicitation handler ran ${elicitations.length} times`);
            const [request] = elicitations;
            expect(request.message === 'Please provide your details', `message ${JSON.stringify(request.message)}`);
            const properties = Object.keys(request.requestedSchema?.properties ?? {});
            expect(
                properties.includes('username') && properties.includes('email'),
                `requestedSchema properties ${properties}`
            );
            expect(!result.isError, `isError result: ${JSON.stringify(result)}`);
            const text = texts(result.content).join(' ');
            expect(text.startsWith('User response: action=accept'), `unexpected text ${JSON.stringify(text)}`);
            expect(text.includes('alice@example.com'), `content not echoed: ${JSON.stringify(text)}`);
            return { text };
        });
    } finally {
        await withTimeout(client.close(), 5_000, 'close').catch(error => {
            process.stderr.write(`legacy-client: close: ${error}\n`);
        });
    }
});
