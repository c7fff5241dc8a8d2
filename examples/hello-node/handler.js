// Greets the caller: GET /fn/<ns>/hello-node?name=Ada or POST {"name": "Ada"}.
exports.handle = async (event, context) => {
  const body = event.body && typeof event.body === "object" ? event.body : {};
  const name = body.name || event.query.name || "world";
  console.log(`greeting ${name} (invocation ${context.invocation_id})`);
  return { message: `Hello, ${name}!`, function: context.function };
};
