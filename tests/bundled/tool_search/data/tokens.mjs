// pi 1.6's tool_search tokens of texts in scripts written without spaces (ICU's word segmenter,
// Intl.Segmenter in Node 22): `node tokens.mjs > tokens.json`. Imports the installed package only.
import { Bm25Ranker, createToolSearchDocument, tokenize } from "/work/pi-run/node_modules/@earendil-works/pi-coding-agent/dist/extensions/tool-search/tool.js";
const texts = [
  "查询天气预报",
  "数据库连接管理工具",
  "ファイルを検索するツール",
  "東京タワーの天気を調べる",
  "한국어텍스트검색 도구",
  "ค้นหาไฟล์ในโฟลเดอร์",
  "café naïve Zürich",
  "readFile 读取文件内容 getHTTPResponse",
  "Ελληνικά κείμενα αναζήτηση",
  "поиск файлов по имени",
];
const tools = [
  { name: "mcp__cn__weather", description: "查询天气预报", parameters: { type: "object", properties: {} } },
  { name: "mcp__cn__db", description: "数据库连接管理工具", parameters: { type: "object", properties: {} } },
  { name: "mcp__jp__search", description: "ファイルを検索するツール", parameters: { type: "object", properties: {} } },
];
const documents = tools.map((tool) => createToolSearchDocument(tool));
const ranking = ["天气", "数据 管理", "検索", "ツール 天气"].map((query) => ({ query, ranked: new Bm25Ranker().rank(query, documents, 8) }));
const tokens = texts.map((text) => ({ text, tokens: tokenize(text) }));
console.log(JSON.stringify({ node: process.versions.node, icu: process.versions.icu, tokens, tools, ranking }, null, 1));
