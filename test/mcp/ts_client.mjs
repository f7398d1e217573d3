// A check of `toolcap mcp` through the TypeScript SDK's Client and
// StdioClientTransport, run by TestMCPEndToEnd/typescript_client.
//
//   node ts_client.mjs TOOLCAP_BINARY ROOT
//
// It starts `TOOLCAP_BINARY mcp -- node <filesystem server> ROOT`, lists the
// tools (so the SDK validates structuredContent against each outputSchema),
// calls search_files for **/*.go under ROOT and read_text_file on a path
// outside ROOT, and prints one JSON line describing what came back.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";

const [bin, root] = process.argv.slice(2);
if (!bin || !root) {
  console.error("usage: node ts_client.mjs TOOLCAP_BINARY ROOT");
  process.exit(2);
}
const server = fileURLToPath(
  new URL("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", "--", process.execPath, server, root],
  stderr: "inherit",
});
const client = new Client({ name: "toolcap-e2e-ts", version: "1.0.0" });
await client.connect(transport);

const textOf = (res) =>
  res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const { tools } = await client.listTools();
const search = await client.callTool({
  name: "search_files",
  arguments: { path: root, pattern: "**/*.go" },
});
const denied = await client.callTool({
  name: "read_text_file",
  arguments: { path: "/etc/hostname" },
});
const text = textOf(search);
console.log(
  JSON.stringify({
    server: client.getServerVersion(),
    tools: tools.map((t) => t.name),
    searchIsError: search.isError === true,
    searchTextBytes: Buffer.byteLength(text),
    searchTail: text.slice(-100),
    structuredContentBytes:
      search.structuredContent === undefined
        ? -1
        : Buffer.byteLength(search.structuredContent.content ?? ""),
    deniedIsError: denied.isError === true,
    deniedText: textOf(denied),
  }),
);
await client.close();
