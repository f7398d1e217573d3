// Transparency check of `toolcap mcp` with the real TypeScript SDK Client and
// the real @modelcontextprotocol/server-everything (issue 9), run by
// TestMCPRelayEverything (cli/mcp_relay_e2e_test.go).
//
//   node everything_client.mjs TOOLCAP_BINARY [MODE...]
//
// The client declares roots {listChanged}, sampling and elicitation and
// answers roots/list, sampling/createMessage and elicitation/create with the
// fixed answers below. For each mode it connects once straight to the server
// and once through toolcap, and checks that the proxied tools/list deep-equals
// the direct one (same tools, same order, every field) and that
// get-roots-list, trigger-sampling-request and trigger-elicitation-request,
// called through toolcap, return what the client answered. Modes (all by
// default):
//
//   stdio            toolcap mcp -- node server-everything stdio
//   http-upstream    server-everything in streamableHttp mode on a free port;
//                    toolcap mcp --url http://127.0.0.1:PORT/mcp, over stdio
//   http-downstream  toolcap mcp --listen 127.0.0.1:PORT2 -- node
//                    server-everything stdio; the client uses
//                    StreamableHTTPClientTransport to http://127.0.0.1:PORT2/mcp
//   http-downstream-token  the same with --token: a POST without
//                    "Authorization: Bearer TOKEN" must get 401
//                    (withoutTokenStatus), the client sends it
//
// It prints one JSON line per mode: {mode, ok, error, toolsEqual,
// directTools, proxiedTools, toolsDiff, roots, sampling, elicitation,
// direct}, where roots, sampling and elicitation are {ok, text} through
// toolcap and direct holds the same three checks made straight to the server
// (which proves the client's side). It exits 0 even when a mode fails:
// the Go test reads the lines.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { spawn } from "node:child_process";
import net from "node:net";
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";

const [bin, ...wanted] = process.argv.slice(2);
if (!bin) {
  console.error("usage: node everything_client.mjs TOOLCAP_BINARY [stdio|http-upstream|http-downstream]...");
  process.exit(2);
}
const everything = fileURLToPath(
  new URL("node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

// The client's fixed answers, which the tools must hand back.
const ROOT = { uri: "file:///tmp/toolcap-e2e-root", name: "toolcap-e2e-root" };
const SAMPLE = {
  role: "assistant",
  content: { type: "text", text: "fixed sample from toolcap-e2e" },
  model: "toolcap-e2e-model",
  stopReason: "endTurn",
};
const ELICIT = {
  action: "accept",
  content: { name: "Ada Lovelace", check: true, email: "ada@example.com", integer: 7 },
};

const timeout = { timeout: 20000 };

function newClient() {
  const client = new Client(
    { name: "toolcap-e2e-everything", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [ROOT] }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => SAMPLE);
  client.setRequestHandler(ElicitRequestSchema, async () => ELICIT);
  return client;
}

const stdioTransport = (command, args) =>
  new StdioClientTransport({ command, args, stderr: "inherit" });
const httpTransport = (url, headers = {}) =>
  new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// waitPort resolves once something accepts connections on port, or rejects
// after ms or when child exits first.
async function waitPort(port, child, ms = 15000) {
  const deadline = Date.now() + ms;
  let exited = null;
  child.once("exit", (code, signal) => (exited = `exited with ${code ?? signal}`));
  for (;;) {
    if (exited) throw new Error(`the process meant to listen on ${port} ${exited}`);
    const ok = await new Promise((resolve) => {
      const sock = net.connect(port, "127.0.0.1");
      sock.once("connect", () => (sock.destroy(), resolve(true)));
      sock.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// startProcess runs a helper process (a server or toolcap --listen) whose
// output goes to our stderr, and returns it with a stop function.
function startProcess(command, args, env = {}) {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["pipe", "inherit", "inherit"],
  });
  // The everything server prints to stdout in HTTP mode; that is ours to
  // keep clean, so it goes to stderr.
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", resolve);
        child.stdin.end();
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 3000).unref();
      }),
  };
}

function startQuiet(command, args, env = {}) {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  child.stdout.on("data", (d) => process.stderr.write(d));
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", resolve);
        child.stdin.end();
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 3000).unref();
      }),
  };
}

const textOf = (res) =>
  (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// toolsDiff describes how two tool lists differ: names in order, then the
// first tool that differs, both versions.
function toolsDiff(direct, proxied) {
  const a = direct.map((t) => t.name);
  const b = proxied.map((t) => t.name);
  if (!isDeepStrictEqual(a, b)) return { directNames: a, proxiedNames: b };
  for (let i = 0; i < direct.length; i++) {
    if (!isDeepStrictEqual(direct[i], proxied[i])) return { index: i, direct: direct[i], proxied: proxied[i] };
  }
  return null;
}

function check(name, args, want) {
  return async (client) => {
    try {
      const res = await client.callTool({ name, arguments: args }, undefined, timeout);
      const text = textOf(res);
      return { ok: res.isError !== true && want.every((w) => text.includes(w)), text };
    } catch (e) {
      return { ok: false, text: `error: ${e?.message ?? e}` };
    }
  };
}

const checks = {
  roots: check("get-roots-list", {}, [ROOT.name, ROOT.uri]),
  sampling: check("trigger-sampling-request", { prompt: "hello", maxTokens: 5 }, [
    SAMPLE.content.text,
    SAMPLE.model,
  ]),
  elicitation: check("trigger-elicitation-request", {}, ["Ada Lovelace", "ada@example.com"]),
};

async function withClient(transport, fn) {
  const client = newClient();
  await client.connect(transport, timeout);
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => {});
  }
}

async function runMode(mode, direct, proxied) {
  const out = { mode, ok: false };
  try {
    // The same checks straight to the server prove the client's side: a
    // failure through toolcap is then toolcap's.
    out.direct = {};
    const directTools = await withClient(direct(), async (c) => {
      const { tools } = await c.listTools(undefined, timeout);
      for (const [k, fn] of Object.entries(checks)) out.direct[k] = await fn(c);
      return tools;
    });
    await withClient(proxied(), async (c) => {
      const proxiedTools = (await c.listTools(undefined, timeout)).tools;
      out.directTools = directTools.map((t) => t.name);
      out.proxiedTools = proxiedTools.map((t) => t.name);
      out.toolsEqual = isDeepStrictEqual(directTools, proxiedTools);
      if (!out.toolsEqual) out.toolsDiff = toolsDiff(directTools, proxiedTools);
      for (const [k, fn] of Object.entries(checks)) out[k] = await fn(c);
    });
    out.ok = out.toolsEqual && out.roots.ok && out.sampling.ok && out.elicitation.ok;
  } catch (e) {
    out.error = String(e?.stack ?? e);
  }
  return out;
}

const modes = {
  stdio: () =>
    runMode(
      "stdio",
      () => stdioTransport(process.execPath, [everything, "stdio"]),
      () => stdioTransport(bin, ["mcp", "--", process.execPath, everything, "stdio"]),
    ),
  "http-upstream": async () => {
    const port = await freePort();
    const server = startQuiet(process.execPath, [everything, "streamableHttp"], { PORT: String(port) });
    try {
      await waitPort(port, server.child);
      const url = `http://127.0.0.1:${port}/mcp`;
      return await runMode(
        "http-upstream",
        () => httpTransport(url),
        () => stdioTransport(bin, ["mcp", "--url", url]),
      );
    } catch (e) {
      return { mode: "http-upstream", ok: false, error: String(e?.stack ?? e) };
    } finally {
      await server.stop();
    }
  },
  "http-downstream": async () => {
    const port = await freePort();
    const proxy = startProcess(bin, ["mcp", "--listen", `127.0.0.1:${port}`, "--", process.execPath, everything, "stdio"]);
    try {
      await waitPort(port, proxy.child);
      return await runMode(
        "http-downstream",
        () => stdioTransport(process.execPath, [everything, "stdio"]),
        () => httpTransport(`http://127.0.0.1:${port}/mcp`),
      );
    } catch (e) {
      return { mode: "http-downstream", ok: false, error: String(e?.stack ?? e) };
    } finally {
      await proxy.stop();
    }
  },
  "http-downstream-token": async () => {
    const port = await freePort();
    const token = "toolcap-e2e-token";
    const url = `http://127.0.0.1:${port}/mcp`;
    const proxy = startProcess(bin, [
      "mcp", "--listen", `127.0.0.1:${port}`, "--token", token, "--", process.execPath, everything, "stdio",
    ]);
    try {
      await waitPort(port, proxy.child);
      // Without the token, the initialize is refused before it reaches the
      // server.
      const refused = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0", id: 1, method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "no-token", version: "1" } },
        }),
      });
      await refused.body?.cancel();
      const out = await runMode(
        "http-downstream-token",
        () => stdioTransport(process.execPath, [everything, "stdio"]),
        () => httpTransport(url, { Authorization: `Bearer ${token}` }),
      );
      out.withoutTokenStatus = refused.status;
      out.ok = out.ok && refused.status === 401;
      return out;
    } catch (e) {
      return { mode: "http-downstream-token", ok: false, error: String(e?.stack ?? e) };
    } finally {
      await proxy.stop();
    }
  },
};

for (const mode of wanted.length ? wanted : Object.keys(modes)) {
  if (!modes[mode]) {
    console.error(`unknown mode ${mode}`);
    process.exit(2);
  }
  console.log(JSON.stringify(await modes[mode]()));
}
process.exit(0);
