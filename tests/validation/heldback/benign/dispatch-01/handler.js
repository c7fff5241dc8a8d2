const routes = {
  "GET /items": async () => [{ id: 1 }],
  "POST /items": async (e) => ({ created: e.body }),
  "DELETE /items": async () => ({ statusCode: 204 }),
};
exports.handle = async (event) => {
  const fn = routes[`${event.method} ${event.path}`];
  return fn ? fn(event) : { statusCode: 404, body: "not found" };
};
