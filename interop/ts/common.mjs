// Shared by the TypeScript interop clients (legacy-client.mjs, modern-client.mjs): where the SDK
// packages are, the fixtures of the conformance server (docs/CONFORMANCE.md section 4), and the
// output contract: one JSON line per check on stdout, exit status 0 only when every check passed.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where scripts/setup-interop.sh installs interop/ts/package.json (override: MCPKIT_INTEROP_NODE_MODULES). */
export const nodeModules =
    process.env.MCPKIT_INTEROP_NODE_MODULES ?? join(repoRoot, '.cache', 'interop', 'node', 'node_modules');

export const STEP_TIMEOUT_MS = 20_000;

export const SIMPLE_TEXT = 'This is a simple text response for testing.';
export const STATIC_TEXT_URI = 'test://static-text';
export const STATIC_TEXT = 'This is the content of the static text resource.';
export const SIMPLE_PROMPT = 'This is a simple prompt for testing.';
export const PNG_1X1 =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/**
 * Imports `subpath` ('.', './client/index.js', ...) of the installed package `name`.
 *
 * The clients live in the repository while the packages live under .cache/, so bare specifiers
 * cannot be resolved from here; this follows the package's `exports` map (exact keys and `*`
 * patterns, conditions `import` then `default`), which is all these packages use.
 */
export async function importPackage(name, subpath = '.') {
    const packageDir = join(nodeModules, name);
    let manifest;
    try {
        manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
    } catch (error) {
        throw new Error(
            `${name} is not installed under ${nodeModules}: run scripts/setup-interop.sh (${error.message})`
        );
    }
    const target = exportTarget(manifest.exports ?? {}, subpath);
    if (target === undefined) throw new Error(`${name} does not export ${subpath}`);
    return import(pathToFileURL(join(packageDir, target)).href);
}

function exportTarget(exportsMap, subpath) {
    if (typeof exportsMap === 'string') return subpath === '.' ? exportsMap : undefined;
    if (subpath in exportsMap) return conditionTarget(exportsMap[subpath]);
    for (const [key, value] of Object.entries(exportsMap)) {
        const star = key.indexOf('*');
        if (star < 0) continue;
        const [prefix, suffix] = [key.slice(0, star), key.slice(star + 1)];
        if (subpath.startsWith(prefix) && subpath.endsWith(suffix) && subpath.length >= key.length - 1) {
            const match = subpath.slice(prefix.length, subpath.length - suffix.length);
            return conditionTarget(value)?.replaceAll('*', match);
        }
    }
    return undefined;
}

function conditionTarget(value) {
    if (typeof value === 'string' || value === null || value === undefined) return value ?? undefined;
    for (const condition of ['import', 'default']) {
        if (condition in value) return conditionTarget(value[condition]);
    }
    return undefined;
}

/** The server command from argv (after an optional `--`). */
export function serverCommand(argv, usage) {
    const args = argv[0] === '--' ? argv.slice(1) : argv;
    if (args.length === 0) {
        process.stderr.write(`${usage}\n`);
        process.exit(2);
    }
    return { command: args[0], args: args.slice(1) };
}

/**
 * What to connect to, from argv: `--url URL` (Streamable HTTP), `--sse URL` (the deprecated
 * HTTP+SSE transport, where the client supports it: `sse` true), or `[--] SERVER_COMMAND [ARGS...]`
 * (stdio). Returns `{ kind: 'http' | 'sse', url }` or `{ kind: 'stdio', command, args }`.
 */
export function clientTarget(argv, usage, { sse = false } = {}) {
    if (argv[0] === '--sse' && !sse) {
        process.stderr.write(`this client has no HTTP+SSE transport\n${usage}\n`);
        process.exit(2);
    }
    if (argv[0] === '--url' || (sse && argv[0] === '--sse')) {
        if (argv.length !== 2) {
            process.stderr.write(`${argv[0]} takes exactly one URL\n${usage}\n`);
            process.exit(2);
        }
        return { kind: argv[0] === '--url' ? 'http' : 'sse', url: new URL(argv[1]) };
    }
    return { kind: 'stdio', ...serverCommand(argv, usage) };
}

/** RUST_* and MCPKIT_* variables, passed on to the server (the SDK hands a child a minimal environment). */
export function passthroughEnv() {
    return Object.fromEntries(
        Object.entries(process.env).filter(([key]) => key.startsWith('RUST_') || key.startsWith('MCPKIT_'))
    );
}

export class CheckFailed extends Error {}

export function expect(condition, message) {
    if (!condition) throw new CheckFailed(message);
}

export function texts(content) {
    return (content ?? []).filter(block => block.type === 'text').map(block => block.text);
}

export function withTimeout(promise, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs named checks, one JSON line each on stdout. */
export class Checks {
    allOk = true;

    record(check, ok, details = {}) {
        this.allOk &&= ok;
        process.stdout.write(`${JSON.stringify({ check, ok, ...details })}\n`);
    }

    async run(check, body) {
        try {
            const details = await withTimeout(body(), STEP_TIMEOUT_MS, check);
            this.record(check, true, details ?? {});
        } catch (error) {
            process.stderr.write(`client: check ${check} failed: ${error?.stack ?? error}\n`);
            this.record(check, false, { error: String(error?.message ?? error) });
        }
    }
}

/** The checks every client runs once connected: tools, a resource, prompts. */
export async function commonChecks(client, checks, { elicitationTool }) {
    await checks.run('list_tools', async () => {
        const { tools } = await client.listTools();
        const names = tools.map(tool => tool.name);
        const missing = ['test_simple_text', 'test_image_content', elicitationTool].filter(n => !names.includes(n));
        expect(missing.length === 0, `tools/list lacks ${missing}; got ${names}`);
        return { count: names.length };
    });

    await checks.run('call_tool', async () => {
        const result = await client.callTool({ name: 'test_simple_text' });
        expect(!result.isError, `isError result: ${JSON.stringify(result)}`);
        const got = texts(result.content);
        expect(got.length === 1 && got[0] === SIMPLE_TEXT, `unexpected content: ${JSON.stringify(result.content)}`);
        return { text: SIMPLE_TEXT };
    });

    await checks.run('call_tool_image', async () => {
        const result = await client.callTool({ name: 'test_image_content' });
        const images = (result.content ?? []).filter(block => block.type === 'image');
        expect(images.length === 1, `expected one image block: ${JSON.stringify(result.content)}`);
        expect(images[0].mimeType === 'image/png', `mimeType ${images[0].mimeType}`);
        expect(images[0].data === PNG_1X1, 'image data is not the fixture PNG');
        return { mime_type: images[0].mimeType };
    });

    await checks.run('read_resource', async () => {
        const result = await client.readResource({ uri: STATIC_TEXT_URI });
        expect(result.contents?.length === 1, `expected one content: ${JSON.stringify(result)}`);
        const [content] = result.contents;
        expect(content.uri === STATIC_TEXT_URI, `uri ${content.uri}`);
        expect(content.text === STATIC_TEXT, `text ${JSON.stringify(content.text)}`);
        return { uri: STATIC_TEXT_URI, mime_type: content.mimeType };
    });

    await checks.run('get_prompt', async () => {
        const result = await client.getPrompt({ name: 'test_simple_prompt' });
        const got = result.messages.map(m => [m.role, m.content?.type === 'text' ? m.content.text : null]);
        expect(
            got.length === 1 && got[0][0] === 'user' && got[0][1] === SIMPLE_PROMPT,
            `unexpected messages: ${JSON.stringify(result)}`
        );
        return { messages: result.messages.length };
    });

    await checks.run('get_prompt_with_arguments', async () => {
        const result = await client.getPrompt({
            name: 'test_prompt_with_arguments',
            arguments: { arg1: 'testValue1', arg2: 'testValue2' }
        });
        const joined = result.messages
            .filter(m => m.content?.type === 'text')
            .map(m => m.content.text)
            .join(' ');
        expect(
            joined.includes('testValue1') && joined.includes('testValue2'),
            `arguments not in prompt: ${JSON.stringify(result)}`
        );
        return { messages: result.messages.length };
    });
}

/**
 * Runs `body` and exits: 0 when every check passed, 1 otherwise (a thrown error is reported as a
 * failed `session` check). Exits explicitly, so a lingering child or timer cannot keep us alive.
 */
export async function main(body) {
    const checks = new Checks();
    try {
        await body(checks);
    } catch (error) {
        process.stderr.write(`client: ${error?.stack ?? error}\n`);
        checks.record('session', false, { error: String(error?.message ?? error) });
    }
    process.exit(checks.allOk ? 0 : 1);
}
