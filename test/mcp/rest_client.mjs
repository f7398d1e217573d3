// A check of keeping the rest through `toolcap mcp` with the TypeScript
// SDK's Client, run by TestMCPRestEndToEnd:
//
//   node rest_client.mjs TOOLCAP_BINARY ROOT
//
// It calls directory_tree on ROOT twice: straight to the npm filesystem
// server, and through `TOOLCAP_BINARY mcp -- node <filesystem server> ROOT`,
// where the result is cut and its marker names toolcap_read. It follows
// toolcap_read from offset 0 page after page, and prints one JSON line of
// figures, with whether the pages give back the direct result byte for
// byte.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";

const [bin, root] = process.argv.slice(2);
if (!bin || !root) {
  console.error("usage: node rest_client.mjs TOOLCAP_BINARY ROOT");
  process.exit(2);
}
const server = fileURLToPath(
  new URL("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

const textOf = (res) =>
  res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const bytes = (s) => Buffer.byteLength(s, "utf8");
// The marker naming the read, at the end of a text: its JSON arguments.
// (A JSON document's marker comes in a text block of its own, without the
// newline, so the joined text has none before it.)
const readMarker = /\n?\[truncated: \d+ bytes dropped, refine your query or read the rest: toolcap_read (\{[^\n]*\})\]$/;

async function session(command, args, follow) {
  // The child's environment is the SDK's default plus HOME, so that the
  // store lives under the HOME the test gives.
  const transport = new StdioClientTransport({ command, args, stderr: "inherit", env: { ...process.env } });
  const client = new Client({ name: "toolcap-e2e-rest", version: "1.0.0" });
  await client.connect(transport);
  const start = Date.now();
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: "directory_tree", arguments: { path: root } }, undefined, { timeout: 120000 });
  const text = textOf(res);
  const fig = {
    resultBytes: bytes(text),
    markers: (text.match(/\[truncated: /g) || []).length,
    readListed: tools.some((t) => t.name === "toolcap_read"),
    pages: 0,
    maxPageBytes: 0,
    totalBytes: 0,
  };
  let whole = text;
  const m = follow && text.match(readMarker);
  if (m) {
    // From offset 0: the pages alone give back the whole output.
    let args = { ...JSON.parse(m[1]), offset: 0 };
    const parts = [];
    for (;;) {
      const page = await client.callTool({ name: "toolcap_read", arguments: args });
      const p = textOf(page);
      if (page.isError) throw new Error(`toolcap_read ${JSON.stringify(args)}: ${p}`);
      fig.pages++;
      fig.maxPageBytes = Math.max(fig.maxPageBytes, bytes(p));
      const next = p.match(readMarker);
      if (!next) {
        parts.push(p);
        break;
      }
      parts.push(p.slice(0, next.index));
      args = JSON.parse(next[1]);
    }
    whole = parts.join("");
    fig.totalBytes = bytes(whole);
  }
  fig.ms = Date.now() - start;
  await client.close();
  return { fig, whole };
}

const direct = await session(process.execPath, [server, root], false);
const proxied = await session(bin, ["mcp", "--", process.execPath, server, root], true);
console.log(JSON.stringify({ direct: direct.fig, proxied: proxied.fig, same: proxied.whole === direct.whole }));
