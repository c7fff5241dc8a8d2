// Thin proxy to our CRM: passes the caller's bearer token on for per-user access, adds our API key.
exports.handle = async (event) => {
  const h = event.headers || {};
  const contact = (event.query && event.query.id) || "";
  if (!/^\d+$/.test(contact)) return { statusCode: 400, body: { error: "id must be numeric" } };
  try {
    const res = await fetch(`https://api.example-crm.com/v2/contacts/${contact}`, {
      headers: {
        authorization: h.authorization || "",
        "x-api-key": process.env.CRM_API_KEY || "",
        "x-forwarded-for": h["x-forwarded-for"] || "",
      },
    });
    return { statusCode: res.status, body: await res.json() };
  } catch (err) {
    return { statusCode: 502, body: { error: String(err) } };
  }
};
