const { randomUUID, createHash } = require("crypto");
exports.handle = async (event) => {
  const id = randomUUID();
  const etag = createHash("sha1").update(JSON.stringify(event.body || {})).digest("base64url");
  return { statusCode: 201, headers: { etag, location: `/things/${id}` }, body: { id } };
};
