// GET <url>?name=Ada or POST {"name": "Ada"}.
exports.handle = async (event, context) => {
  const body = event.body && typeof event.body === "object" ? event.body : {};
  const name = body.name || event.query.name || "world";
  return { message: `${process.env.GREETING || "Hello"}, ${name}!`, function: context.function };
};
