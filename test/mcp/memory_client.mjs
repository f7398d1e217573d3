// What a capped structured result looks like through `toolcap mcp`, with the
// real @modelcontextprotocol/server-memory (figures for issue 10), run by
// TestMCPRelayMemory (cli/mcp_relay_e2e_test.go).
//
//   node memory_client.mjs TOOLCAP_BINARY MEMORY_FILE
//
// Through `TOOLCAP_BINARY mcp -- node server-memory` (MEMORY_FILE_PATH set to
// MEMORY_FILE, which should not exist yet), it creates 400 entities of 3
// observations each and 400 relations, calls read_graph, whose whole result
// is far over the default 16384-byte limit, and prints one JSON line:
// {isError, structuredContentBytes (its JSON, -1 when absent), textIsJSON
// (whether the text block parses as JSON), entitiesKept and relationsKept
// (from structuredContent, or the parsed text when there is none, -1 when
// neither), contentTextBytes (all text blocks together), truncation (the
// result's _meta["toolcap/truncation"], or null), tail (the text's last 120
// characters)}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";

const [bin, memoryFile] = process.argv.slice(2);
if (!bin || !memoryFile) {
  console.error("usage: node memory_client.mjs TOOLCAP_BINARY MEMORY_FILE");
  process.exit(2);
}
const server = fileURLToPath(
  new URL("node_modules/@modelcontextprotocol/server-memory/dist/index.js", import.meta.url),
);

const N = 400;
const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", "--", process.execPath, server],
  env: { ...process.env, MEMORY_FILE_PATH: memoryFile },
  stderr: "inherit",
});
const client = new Client({ name: "toolcap-e2e-memory", version: "1.0.0" });
await client.connect(transport);
const opts = { timeout: 60000 };

const entities = Array.from({ length: N }, (_, i) => ({
  name: `entity-${i}`,
  entityType: i % 2 ? "person" : "project",
  observations: [0, 1, 2].map((k) => `observation ${k} of entity ${i}: a sentence long enough to matter`),
}));
const relations = Array.from({ length: N }, (_, i) => ({
  from: `entity-${i}`,
  to: `entity-${(i + 1) % N}`,
  relationType: "works_with",
}));
await client.listTools(); // as clients do: the output schemas are learned from it
const created = await client.callTool({ name: "create_entities", arguments: { entities } }, undefined, opts);
const related = await client.callTool({ name: "create_relations", arguments: { relations } }, undefined, opts);
const graph = await client.callTool({ name: "read_graph", arguments: {} }, undefined, opts);

const texts = (graph.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
const text = texts.join("");
let parsed = null;
try {
  parsed = JSON.parse(texts[0] ?? "");
} catch {
  parsed = null;
}
const counted = graph.structuredContent ?? parsed;
console.log(
  JSON.stringify({
    createEntitiesIsError: created.isError === true,
    createRelationsIsError: related.isError === true,
    createEntitiesStructuredBytes:
      created.structuredContent === undefined ? -1 : Buffer.byteLength(JSON.stringify(created.structuredContent)),
    createRelationsStructuredBytes:
      related.structuredContent === undefined ? -1 : Buffer.byteLength(JSON.stringify(related.structuredContent)),
    isError: graph.isError === true,
    structuredContentBytes:
      graph.structuredContent === undefined ? -1 : Buffer.byteLength(JSON.stringify(graph.structuredContent)),
    textIsJSON: parsed !== null,
    entitiesKept: Array.isArray(counted?.entities) ? counted.entities.length : -1,
    relationsKept: Array.isArray(counted?.relations) ? counted.relations.length : -1,
    contentTextBytes: texts.reduce((n, t) => n + Buffer.byteLength(t), 0),
    truncation: graph._meta?.["toolcap/truncation"] ?? null,
    tail: text.slice(-120),
    textBlocks: texts.length,
    firstBlockTail: (texts[0] ?? "").slice(-160),
  }),
);
await client.close();
