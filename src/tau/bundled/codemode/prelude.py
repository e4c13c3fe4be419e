"""The JavaScript that runs inside the VM before the script (tau's own, with pi's observable rules).

It evaluates to ``function (bridge, toolsJson, globalsJson, storeJson, scriptLines)`` returning a
``control(kind, ...)`` function the worker drives: ``control("run", fn)`` starts the script,
``control("settle", id, ok, payload, propertiesJson)`` answers a call, ``control("stalled")`` fails a
script that waits on nothing (no timers, no I/O: nothing could ever resume it).

What the script gets: ``tools.<id>(args)`` (a guarded proxy naming close matches for a typo),
``ALL_TOOLS``, ``text``, ``image``, ``exit``, ``console.*``, ``store``/``load`` and the host's
globals (``searchTools``, ``models.*``, ...). The bridge stays in a closure, and the built-ins are
frozen first, so a script that patches ``Array.prototype.toJSON`` cannot corrupt what is reported
to the host. Frames of this prelude (lines past ``scriptLines``) are dropped from stack traces and
the script's own frames are named ``codemode.js``, as pi names them.

``bridge(kind, ...)`` messages: ``"call"``/``"global"`` (id, name, argsJson or undefined),
``"output"`` (``"text"``/``"console"``, text) or (``"image"``, data, mimeType), ``"done"`` (ok,
valueJson | errorJson, writesJson).
"""

from __future__ import annotations

__all__ = [
    "MAX_OUTPUT_CHARS",
    "MAX_OUTPUT_ITEMS",
    "MAX_STORE_TOTAL_CHARS",
    "MAX_STORE_VALUE_CHARS",
    "PRELUDE",
]

MAX_STORE_VALUE_CHARS = 256 * 1024
MAX_STORE_TOTAL_CHARS = 1024 * 1024
# The host keeps all output until the script ends: without a limit a printing loop grows its memory.
MAX_OUTPUT_CHARS = 16 * 1024 * 1024
MAX_OUTPUT_ITEMS = 100_000

_IMAGE_EXPECTS = (
    "image expects a non-empty image URL string, an object with image_url, or an image block "
    '{ type: "image", data, mimeType }'
)

PRELUDE = r"""(function (bridge, toolsJson, globalsJson, storeJson, scriptLines) {
  "use strict";

  // Freeze everything reachable from the global object (and the intrinsics reachable only from
  // instances). Properties commonly assigned on instances (this.name = ... in an Error subclass)
  // become accessors whose setter defines an own property, so freezing does not break them.
  (function freezeBuiltins() {
    const assignable = new Set(["constructor", "name", "message", "toString", "toLocaleString", "valueOf", "toJSON"]);
    const visited = new Set([globalThis]);
    const pending = [];
    const visit = (value) => {
      if ((typeof value === "object" && value !== null) || typeof value === "function") {
        if (!visited.has(value)) {
          visited.add(value);
          pending.push(value);
        }
      }
    };
    function assignOnInstances(owner, key, value, enumerable) {
      const holder = {
        get property() {
          return value;
        },
        set property(next) {
          if (this === owner) {
            throw new TypeError("Cannot assign to read only property '" + String(key) + "' of a built-in");
          }
          if ((typeof this !== "object" || this === null) && typeof this !== "function") return;
          Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
        },
      };
      const { get, set } = Object.getOwnPropertyDescriptor(holder, "property");
      Object.defineProperty(owner, key, { get, set, enumerable, configurable: false });
      visit(get);
      visit(set);
    }
    for (const key of Reflect.ownKeys(globalThis)) {
      const descriptor = Object.getOwnPropertyDescriptor(globalThis, key);
      visit(descriptor.value);
      visit(descriptor.get);
      visit(descriptor.set);
      if ("value" in descriptor && descriptor.configurable) {
        Object.defineProperty(globalThis, key, { writable: false, configurable: false });
      }
    }
    for (const instance of [
      function* () {},
      async function () {},
      async function* () {},
      Int8Array,
      [][Symbol.iterator](),
      new Map()[Symbol.iterator](),
      new Set()[Symbol.iterator](),
      ""[Symbol.iterator](),
      /a/[Symbol.matchAll](""),
    ]) {
      visit(Object.getPrototypeOf(instance));
    }
    if (typeof Iterator === "function") {
      if (typeof Iterator.prototype.map === "function") visit(Object.getPrototypeOf([].values().map((x) => x)));
      if (typeof Iterator.from === "function") visit(Object.getPrototypeOf(Iterator.from({ next() {} })));
    }
    while (pending.length > 0) {
      const object = pending.pop();
      visit(Object.getPrototypeOf(object));
      const descriptors = Object.getOwnPropertyDescriptors(object);
      for (const key of Reflect.ownKeys(descriptors)) {
        const descriptor = descriptors[key];
        if ("value" in descriptor) {
          visit(descriptor.value);
          if (descriptor.writable && descriptor.configurable && (object === Object.prototype || assignable.has(key))) {
            assignOnInstances(object, key, descriptor.value, descriptor.enumerable);
          }
        } else {
          visit(descriptor.get);
          visit(descriptor.set);
        }
      }
      Object.freeze(object);
    }
  })();

  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const then = Promise.prototype.then;
  const ErrorType = Error;
  const TypeErrorType = TypeError;
  const RangeErrorType = RangeError;
  const waiting = new Map();
  let nextCall = 1;
  let finished = false;
  const EXITED = Object.freeze({});
  const FRAME = /<input>:(\d+):/;

  function finish(ok, payload, writes) {
    if (finished) return;
    finished = true;
    bridge("done", ok, payload, writes);
  }

  // "Name: message" then the script's frames (QuickJS stacks hold frames only).
  function errorText(error) {
    const head = error.message ? error.name + ": " + error.message : String(error.name);
    const frames = [];
    if (typeof error.stack === "string") {
      for (const line of error.stack.split("\n")) {
        if (!line.trim()) continue;
        const match = FRAME.exec(line);
        if (match && Number(match[1]) > scriptLines) continue;
        frames.push(line.split("<input>:").join("codemode.js:"));
      }
    }
    return [head, ...frames].join("\n");
  }

  function show(value) {
    if (typeof value === "string") return value;
    if (value instanceof ErrorType) return errorText(value);
    if (typeof value === "number") return String(value);
    try {
      const json = stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  }

  function describe(error) {
    try {
      if (error instanceof ErrorType) {
        return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
      }
      return stringify({ message: String(show(error)) });
    } catch {
      return stringify({ message: "The script threw a value that cannot be described" });
    }
  }

  function caller(kind, name, spread) {
    return (...args) =>
      new Promise((resolve, reject) => {
        let json;
        try {
          const value = spread ? args : args[0];
          json = value === undefined ? undefined : stringify(value);
        } catch (error) {
          reject(error);
          return;
        }
        const id = nextCall++;
        waiting.set(id, { resolve, reject });
        bridge(kind, id, name, json);
      });
  }

  const tools = Object.create(null);
  const listed = [];
  for (const { name, jsName, description } of parse(toolsJson)) {
    const call = caller("call", name, false);
    if (!(jsName in tools)) {
      tools[jsName] = call;
      listed.push(Object.freeze({ name: jsName, description }));
    }
    if (!(name in tools)) tools[name] = call;
  }
  Object.freeze(tools);
  Object.freeze(listed);

  // A member that does not exist throws an error naming the close matches, not a later "not a function".
  const squash = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");
  function guarded(target, label, names, hint) {
    return new Proxy(target, {
      get(object, property, receiver) {
        if (typeof property !== "string" || property in object || property in Object.prototype || property === "then" || property === "toJSON") {
          return Reflect.get(object, property, receiver);
        }
        const wanted = squash(property);
        const same = names.filter((name) => squash(name) === wanted);
        const near = same.length > 0 ? same : names.filter((name) => wanted && (squash(name).includes(wanted) || wanted.includes(squash(name))));
        let message = label + "." + property + " does not exist.";
        if (near.length > 0) message += " Did you mean " + near.slice(0, 5).map((name) => label + "." + name).join(", ") + "?";
        else if (names.length <= 20) message += " Available: " + names.join(", ") + ".";
        if (hint) message += " " + hint;
        message += ' Check for a member with "' + property + '" in ' + label + ".";
        throw new TypeErrorType(message);
      },
    });
  }
  const toolsProxy = guarded(tools, "tools", listed.map((tool) => tool.name), "ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.");

  const groups = new Map();
  for (const { name, spread } of parse(globalsJson)) {
    const call = caller("global", name, spread);
    const dot = name.indexOf(".");
    if (dot === -1) {
      Object.defineProperty(globalThis, name, { value: call, enumerable: true });
      continue;
    }
    const group = name.slice(0, dot);
    if (!groups.has(group)) groups.set(group, Object.create(null));
    groups.get(group)[name.slice(dot + 1)] = call;
  }
  for (const [group, members] of groups) {
    Object.freeze(members);
    Object.defineProperty(globalThis, group, { value: guarded(members, group, Object.keys(members)), enumerable: true });
  }

  // key -> JSON text; sizes count key and JSON characters.
  const stored = new Map(Object.entries(parse(storeJson)));
  const written = new Map();
  let storedChars = 0;
  for (const [key, json] of stored) storedChars += key.length + json.length;
  const STORE_HINT = "store() is for small state such as IDs or summaries. Show images with image(), keep large data in variables, or write it to a file with a tool.";

  function store(key, value) {
    if (typeof key !== "string") throw new TypeError("store() key must be a string");
    const before = stored.has(key) ? key.length + stored.get(key).length : 0;
    if (value === undefined) {
      stored.delete(key);
      storedChars -= before;
      written.set(key, undefined);
      return;
    }
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable: " + show(error));
    }
    if (json === undefined) throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable");
    if (json.length > __VALUE_CHARS__) {
      throw new RangeError("store(" + stringify(key) + ") value has " + json.length + " characters of JSON, more than the limit of __VALUE_CHARS__. " + STORE_HINT);
    }
    const after = storedChars - before + key.length + json.length;
    if (after > __TOTAL_CHARS__) {
      throw new RangeError("store is full: stored values would exceed __TOTAL_CHARS__ characters of JSON. Delete keys with store(key, undefined). " + STORE_HINT);
    }
    stored.set(key, json);
    storedChars = after;
    written.set(key, json);
  }

  function load(key) {
    if (typeof key !== "string") throw new TypeError("load() key must be a string");
    const json = stored.get(key);
    return json === undefined ? undefined : parse(json);
  }

  function writesJson() {
    const entries = [];
    for (const [key, json] of written) entries.push(json === undefined ? [key] : [key, json]);
    return stringify(entries);
  }

  let outputChars = 0;
  let outputItems = 0;
  function emit(kind, data, mimeType) {
    if (finished) return;
    outputChars += data.length;
    outputItems++;
    if (outputChars > __OUTPUT_CHARS__ || outputItems > __OUTPUT_ITEMS__) {
      const error = new RangeErrorType("script output exceeded the limit of __OUTPUT_CHARS__ characters or __OUTPUT_ITEMS__ text(), image(), and console calls. Print a summary instead, or write large data to a file with a tool.");
      finish(false, describe(error));
      throw error;
    }
    bridge("output", kind, data, mimeType);
  }

  function rendered(value) {
    if (value === undefined || value === null || (typeof value !== "object" && typeof value !== "function")) return String(value);
    const json = stringify(value);
    return json === undefined ? String(value) : json;
  }

  function text(value) {
    let out;
    try {
      out = rendered(value);
    } catch (error) {
      throw new TypeErrorType(error instanceof ErrorType ? error.message : String(error));
    }
    emit("text", out);
  }

  const IMAGE_EXPECTS = __IMAGE_EXPECTS__;
  function imageUrl(value) {
    if (typeof value === "string") return value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeErrorType(IMAGE_EXPECTS);
    if (value.image_url !== undefined) {
      if (typeof value.image_url !== "string") throw new TypeErrorType(IMAGE_EXPECTS);
      return value.image_url;
    }
    if (typeof value.type !== "string") throw new TypeErrorType(IMAGE_EXPECTS);
    if (value.type !== "image") throw new TypeErrorType('image only accepts image blocks, got "' + value.type + '"');
    if (typeof value.data !== "string" || value.data === "") throw new TypeErrorType("image expected image block data");
    if (value.data.toLowerCase().startsWith("data:")) return value.data;
    return "data:;base64," + value.data;
  }

  // Base64 prefixes of the formats providers take inline: PNG, JPEG (not JPEG-LS), GIF, WebP.
  const SIGNATURES = [
    ["image/png", /^iVBORw0KGg/],
    ["image/jpeg", /^[/]9j[/](?!9)/],
    ["image/gif", /^R0lGOD[dl]h/],
    ["image/webp", /^UklG.{8}RUJQ/],
  ];
  function image(value) {
    const url = imageUrl(value);
    if (url === "") throw new TypeErrorType(IMAGE_EXPECTS);
    const colon = url.indexOf(":");
    const scheme = colon === -1 ? "" : url.slice(0, colon).toLowerCase();
    if (scheme === "http" || scheme === "https") {
      throw new TypeErrorType("remote image URLs are not supported in tool outputs. Pass a base64 data URI instead");
    }
    const comma = url.indexOf(",");
    const header = comma === -1 ? [] : url.slice(colon + 1, comma).split(";");
    if (scheme !== "data" || comma === -1 || header.slice(1).every((part) => part.toLowerCase() !== "base64")) {
      throw new TypeErrorType("invalid image output. Pass a base64 data URI instead");
    }
    const data = url.slice(comma + 1).replace(/\s+/g, "");
    if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
      throw new TypeErrorType("invalid image output. The image data is not valid base64 (truncated or corrupted?)");
    }
    const head = data.slice(0, 16);
    const found = SIGNATURES.find(([, pattern]) => pattern.test(head));
    if (!found) throw new TypeErrorType("invalid image output. The image data is not a PNG, JPEG, GIF, or WebP image");
    emit("image", data, found[0]);
  }

  function exit() {
    let writes;
    try {
      writes = writesJson();
    } catch (error) {
      finish(false, describe(error));
      throw EXITED;
    }
    finish(true, undefined, writes);
    throw EXITED;
  }

  const consoleObject = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    consoleObject[level] = (...args) => {
      emit("console", args.map(show).join(" "));
    };
  }
  Object.freeze(consoleObject);

  for (const [name, value] of [
    ["store", store],
    ["load", load],
    ["tools", toolsProxy],
    ["ALL_TOOLS", listed],
    ["console", consoleObject],
    ["text", text],
    ["image", image],
    ["exit", exit],
  ]) {
    Object.defineProperty(globalThis, name, { value, enumerable: true });
  }

  function settle(id, ok, payload, propertiesJson) {
    const entry = waiting.get(id);
    if (!entry) return;
    waiting.delete(id);
    if (!ok) {
      const error = new ErrorType(payload);
      if (propertiesJson !== undefined && propertiesJson !== null) {
        const properties = parse(propertiesJson);
        for (const key of Object.keys(properties)) {
          if (key === "name" || key === "message" || key === "stack") continue;
          Object.defineProperty(error, key, { value: properties[key], writable: true, enumerable: true, configurable: true });
        }
      }
      entry.reject(error);
      return;
    }
    let value;
    try {
      value = payload === undefined || payload === null ? undefined : parse(payload);
    } catch (error) {
      entry.reject(error);
      return;
    }
    entry.resolve(value);
  }

  function run(fn) {
    let promise;
    try {
      promise = fn(toolsProxy, consoleObject);
    } catch (error) {
      finish(false, describe(error));
      return;
    }
    then.call(
      promise,
      (value) => {
        let json;
        try {
          json = value === undefined ? undefined : stringify(value);
        } catch (error) {
          finish(false, describe(error));
          return;
        }
        finish(true, json, writesJson());
      },
      (error) => {
        if (error === EXITED) return;
        finish(false, describe(error));
      },
    );
  }

  function stalled() {
    if (finished || waiting.size > 0) return false;
    finish(false, stringify({
      name: "Error",
      message: "The script is waiting on a promise that can never settle: no tool call is pending, and timers do not exist here.",
    }));
    return true;
  }

  return function control(kind, a, b, c, d) {
    if (kind === "run") return run(a);
    if (kind === "settle") return settle(a, b, c, d);
    if (kind === "stalled") return stalled();
    return undefined;
  };
})"""

PRELUDE = (
    PRELUDE.replace("__VALUE_CHARS__", str(MAX_STORE_VALUE_CHARS))
    .replace("__TOTAL_CHARS__", str(MAX_STORE_TOTAL_CHARS))
    .replace("__OUTPUT_CHARS__", str(MAX_OUTPUT_CHARS))
    .replace("__OUTPUT_ITEMS__", str(MAX_OUTPUT_ITEMS))
    .replace("__IMAGE_EXPECTS__", '"' + _IMAGE_EXPECTS.replace('"', '\\"') + '"')
)
