const store = new Map();

const json = (statusCode, body) => ({
  statusCode,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

exports.handler = async (event) => {
  const id = event.pathParameters && event.pathParameters.id;
  switch (event.httpMethod) {
    case "GET":
      if (id) return store.has(id) ? json(200, store.get(id)) : json(404, { error: "product not found" });
      return json(200, { products: [...store.values()] });
    case "POST": {
      let body;
      try {
        body = JSON.parse(event.body || "{}");
      } catch (e) {
        return json(400, { error: "invalid JSON" });
      }
      if (body.price === undefined) return json(422, { error: "price is required" });
      const newId = String(store.size + 1);
      store.set(newId, { id: newId, ...body });
      return json(201, store.get(newId));
    }
    default:
      return json(405, { error: `${event.httpMethod} not allowed` });
  }
};
