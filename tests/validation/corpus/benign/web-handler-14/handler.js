const { createRemoteJWKSet, jwtVerify, errors } = require("jose");

const ISSUER = process.env.AUTH_ISSUER; // e.g. https://example.eu.auth0.com/
const JWKS = createRemoteJWKSet(new URL(".well-known/jwks.json", ISSUER));

async function authenticate(headers) {
  const header = headers.authorization || headers.Authorization || "";
  const [scheme, token] = header.split(" ");
  if (scheme !== "Bearer" || !token) throw Object.assign(new Error("missing bearer token"), { status: 401 });
  try {
    const { payload } = await jwtVerify(token, JWKS, { issuer: ISSUER, audience: process.env.AUTH_AUDIENCE });
    return payload;
  } catch (err) {
    const status = err instanceof errors.JWTExpired ? 401 : 403;
    throw Object.assign(new Error(err.code || "invalid token"), { status });
  }
}

exports.handler = async (event) => {
  let claims;
  try {
    claims = await authenticate(event.headers || {});
  } catch (err) {
    return { statusCode: err.status || 401, body: JSON.stringify({ error: err.message }) };
  }
  const permissions = claims.permissions || [];
  if (!permissions.includes("read:reports")) {
    return { statusCode: 403, body: JSON.stringify({ error: "read:reports required" }) };
  }
  return {
    statusCode: 200,
    body: JSON.stringify({ user: claims.sub, org: claims.org_id, reports: [] }),
  };
};
