// The scripted model of the issue-22 goldens, for real pi 1.6 (see README.md beside this file).
// tests/regressions/pi22_faux.py gives tau the same replies.
//
//   "bash: <cmd>"           -> a bash tool call
//   "call: <name> <json>"   -> a <name> tool call with the JSON object as its arguments
//   "fail: <text>"          -> an error reply (stopReason "error", errorMessage <text>)
//   a tool result           -> "tool <name> returned: <output> | args <the call's arguments as JSON>"
//   a summary request       -> an error reply "summary service unavailable"
//   anything else           -> "echo: <text>"
//
// PI22_REASONING=1 declares faux-1 and faux-2 as reasoning models.
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";

let calls = 0;

function text(content: any): string {
  if (typeof content === "string") return content;
  return content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("\n");
}

function isSummaryRequest(messages: any[]): boolean {
  const system = messages.find((m) => m.role === "system");
  const prompt = system ? JSON.stringify(system) : "";
  const firstUser = messages.find((m) => m.role === "user");
  return prompt.includes("context summarization assistant") || text(firstUser?.content ?? "").startsWith("<conversation>");
}

function callArguments(messages: any[], id: string): any {
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type === "toolCall" && block.id === id) return block.arguments;
    }
  }
  return null;
}

export function respond(context: any) {
  const messages = context.messages;
  if (isSummaryRequest(messages)) {
    return fauxAssistantMessage([], { stopReason: "error", errorMessage: "summary service unavailable" });
  }
  const last = messages[messages.length - 1];
  if (last.role === "toolResult") {
    const args = JSON.stringify(callArguments(messages, last.toolCallId));
    return fauxAssistantMessage(`tool ${last.toolName} returned: ${text(last.content).trim()} | args ${args}`);
  }
  const prompt = text(last.content);
  const id = () => `call_${++calls}`;
  if (prompt.startsWith("bash: ")) {
    return fauxAssistantMessage([fauxToolCall("bash", { command: prompt.slice(6) }, { id: id() })], { stopReason: "toolUse" });
  }
  if (prompt.startsWith("call: ")) {
    const rest = prompt.slice(6);
    const space = rest.indexOf(" ");
    const call = fauxToolCall(rest.slice(0, space), JSON.parse(rest.slice(space + 1)), { id: id() });
    return fauxAssistantMessage([call], { stopReason: "toolUse" });
  }
  if (prompt.startsWith("fail: ")) {
    return fauxAssistantMessage([], { stopReason: "error", errorMessage: prompt.slice(6) });
  }
  return fauxAssistantMessage(`echo: ${prompt}`);
}

export default function (pi: any) {
  const reasoning = process.env.PI22_REASONING === "1";
  const models = reasoning ? [{ id: "faux-1", reasoning: true }, { id: "faux-2", reasoning: true }] : undefined;
  const faux = fauxProvider({ api: "faux", provider: "faux", tokenSize: { min: 4, max: 4 }, ...(models ? { models } : {}) });
  faux.setResponses(Array.from({ length: 256 }, () => respond));
  pi.registerProvider(faux.provider);
}
