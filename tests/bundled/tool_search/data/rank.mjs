import { Bm25Ranker, createToolSearchDocument } from "/work/pi-run/node_modules/@earendil-works/pi-coding-agent/dist/extensions/tool-search/tool.js";
import { readFileSync } from "node:fs";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const documents = input.tools.map((tool) => createToolSearchDocument(tool, tool.namespace));
const out = input.queries.map(([query, limit]) => ({ query, limit, ranked: new Bm25Ranker().rank(query, documents, limit) }));
console.log(JSON.stringify({ documents, results: out }, null, 1));
