const v8 = require("v8");
const zlib = require("zlib");

function embedded() {
  // ruleid: js-deserialise-embedded, js-v8-deserialize
  return v8.deserialize(Buffer.from("/w1vIgNmb28iA2JhcnsB", "base64"));
}

function inflated(blob) {
  // ruleid: js-deserialise-embedded, js-v8-deserialize
  return v8.deserialize(zlib.inflateSync(blob));
}

function nodeSerialize(body) {
  // ruleid: js-unsafe-deserialiser
  const serialize = require("node-serialize");
  // ruleid: js-unsafe-deserialiser
  return serialize.unserialize(body);
}

function review(buf) {
  // ruleid: js-v8-deserialize
  return v8.deserialize(buf);
}

function benign(event) {
  // ok: js-deserialise-embedded, js-v8-deserialize
  const body = JSON.parse(event.body);
  // ok: js-deserialise-embedded
  const bytes = v8.serialize(body);
  // ok: js-unsafe-deserialiser
  const qs = require("querystring").parse(event.query);
  return bytes;
}
