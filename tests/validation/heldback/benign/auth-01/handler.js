const jwt = require("jsonwebtoken");
exports.handle = async (event) => {
  const h = event.headers.authorization || "";
  const token = h.startsWith("Bearer ") ? h.slice(7) : null;
  if (!token) return { statusCode: 401, body: "missing token" };
  try {
    const claims = jwt.verify(token, process.env.JWT_SECRET, { algorithms: ["HS256"] });
    return { user: claims.sub, roles: claims.roles || [] };
  } catch (e) {
    return { statusCode: 401, body: "invalid token" };
  }
};
