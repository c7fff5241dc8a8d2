const Ajv = require("ajv");

const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile({
  type: "object",
  required: ["name", "quantity"],
  properties: { name: { type: "string", maxLength: 100 }, quantity: { type: "integer", minimum: 1 } },
  additionalProperties: false,
});

exports.handler = async (event) => {
  const ok = validate(event);
  return { ok, errors: ok ? [] : validate.errors.map((e) => `${e.instancePath} ${e.message}`) };
};
