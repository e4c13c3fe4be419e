// Node's Math.log of inputs spread over the doubles and over tool_search's IDF range
// (1 + (N - n + 0.5) / (n + 0.5)): `node math_log.mjs > math_log.json`.
let seed = 7;
const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed / 2147483648);
const xs = [5e-324, 1e-310, 2.2250738585072014e-308, 0.1, 0.5, 1, 1 + 2 ** -52, 2, Math.E, 10, 1e300, Number.MAX_VALUE];
for (let n = 1; n <= 80; n++) for (let f = 1; f <= n; f++) xs.push(1 + (n - f + 0.5) / (f + 0.5));
for (let i = 0; i < 1200; i++) xs.push(0.5 + 3.5 * next(), 10 ** (600 * next() - 300));
console.log(JSON.stringify(xs.map((x) => [x, Math.log(x)])));
