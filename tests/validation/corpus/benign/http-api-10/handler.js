const Bottleneck = require("bottleneck");
const axios = require("axios");

// the CRM allows 10 requests / second and 5 in flight per API key
const limiter = new Bottleneck({ maxConcurrent: 5, minTime: 100, reservoir: 10, reservoirRefreshAmount: 10, reservoirRefreshInterval: 1000 });
const crm = axios.create({
  baseURL: "https://api.hubapi.com/crm/v3",
  headers: { Authorization: `Bearer ${process.env.HUBSPOT_TOKEN}` },
  timeout: 8000,
});

limiter.on("failed", async (error, info) => {
  if (error.response?.status === 429 && info.retryCount < 3) {
    return Number(error.response.headers["retry-after"] || 1) * 1000; // retry after this many ms
  }
  return undefined;
});

const getContact = limiter.wrap(async (email) => {
  const { data } = await crm.post("/objects/contacts/search", {
    filterGroups: [{ filters: [{ propertyName: "email", operator: "EQ", value: email }] }],
    properties: ["firstname", "lastname", "lifecyclestage"],
    limit: 1,
  });
  return data.results[0] || null;
});

exports.handler = async (event) => {
  const emails = [...new Set((event.emails || []).map((e) => e.trim().toLowerCase()))].slice(0, 200);
  const results = await Promise.allSettled(emails.map((e) => getContact(e)));
  return emails.map((email, i) => ({
    email,
    found: results[i].status === "fulfilled" && results[i].value !== null,
    stage: results[i].value?.properties?.lifecyclestage ?? null,
    error: results[i].status === "rejected" ? results[i].reason.message : undefined,
  }));
};
